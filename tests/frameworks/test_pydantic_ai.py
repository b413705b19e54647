"""Pydantic AI agents through their adapter: real agents on the scripted OpenAI-compatible
server, evaluated by the whole pipeline (``pipeline.evaluate``)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from openai import AsyncOpenAI
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from agentflow_eval.agents.base import SessionContext, TrajectoryRecorder
from agentflow_eval.agents.frameworks.pydantic_ai import PydanticAIAgent
from agentflow_eval.agents.loader import AgentLoadError, load_agent
from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.errors import InputError
from agentflow_eval.files.loading import load_evalset
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.llm.retry import ProviderAuthError
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet, Message, SessionInput
from agentflow_eval.models.results import (
    MessageEvent,
    ModelCallEvent,
    RunResult,
    Trial,
)
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from examples.weather.agent import get_weather

REPO = Path(__file__).resolve().parents[2]
PARIS = {"location": "Paris", "condition": "rainy", "temperature": 61, "unit": "°F"}
TOKYO = {"location": "Tokyo", "condition": "sunny", "temperature": 75, "unit": "°F"}


@pytest.fixture(scope="module")
def shared() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as running:
        yield running


@pytest.fixture
def server(shared: ScriptedOpenAIServer) -> ScriptedOpenAIServer:
    """The module's server, its script empty, no handler and no recorded requests."""
    shared.requests.clear()
    shared.handler = None
    while shared._script:
        shared._script.popleft()
    return shared


def model(url: str, name: str = "scripted", *, max_retries: int = 0) -> OpenAIChatModel:
    client = AsyncOpenAI(base_url=url, api_key="test-key", max_retries=max_retries)
    return OpenAIChatModel(name, provider=OpenAIProvider(openai_client=client))


def weather_agent(url: str, **kw: Any) -> Agent[Any, str]:
    return Agent(
        model(url, **kw),
        name="weather_agent",
        instructions="Use get_weather for every city.",
        tools=[get_weather],
    )


def evalset(*cases: dict[str, Any]) -> EvalSet:
    return EvalSet.model_validate({"eval_set_id": "pai", "eval_cases": list(cases)})


def case(eval_id: str, *turns: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"eval_id": eval_id, "conversation": list(turns), **extra}


def config(**criteria: Any) -> EvalConfig:
    return EvalConfig.model_validate({"criteria": criteria or {"response_match_score": 0.5}})


async def run_eval(
    agent: Any, cases: EvalSet, cfg: EvalConfig, tmp_path: Path, **options: Any
) -> RunResult:
    settings = {"runs": 1, "trial_timeout_s": 20.0, **options}
    return await evaluate(agent, cases, cfg, **settings, output_dir=tmp_path)


def only_trial(run: RunResult) -> Trial:
    [result] = run.trials
    return result.trial


def scores(run: RunResult) -> dict[str, float | None]:
    [result] = run.trials
    return {c.criterion: c.score for c in result.criteria}


def kinds(trial: Trial) -> list[str]:
    return [event.kind for turn in trial.turns for event in turn.events]


# -- a turn, its events and its usage -------------------------------------------------


async def test_a_single_turn_records_tool_calls_usage_and_the_agent_step(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.push(
        Reply.tools(("get_weather", {"location": "Paris"}), prompt_tokens=31, completion_tokens=7),
        Reply.text("Paris is rainy at 61°F.", prompt_tokens=58, completion_tokens=9),
    )
    cases = evalset(
        case(
            "paris",
            {
                "user_content": "Weather in Paris?",
                "expected_tool_trajectory": [
                    {"name": "get_weather", "args": {"location": "Paris"}}
                ],
                "expected_final_response": "Paris is rainy at 61°F.",
                "expected_nodes": ["weather_agent"],
            },
        )
    )
    cfg = config(
        tool_trajectory_avg_score={"threshold": 1.0},
        response_match_score={"threshold": 0.9},
        node_trajectory_avg_score={"threshold": 1.0},
    )
    run = await run_eval(PydanticAIAgent(weather_agent(server.url)), cases, cfg, tmp_path)
    trial = only_trial(run)
    assert trial.error is None
    [turn] = trial.turns
    assert turn.final_response == "Paris is rainy at 61°F."
    assert kinds(trial) == ["node", "model_call", "tool_call", "model_call", "message"]
    [call] = turn.tool_calls
    assert (call.name, call.args, call.result, call.error) == (
        "get_weather",
        {"location": "Paris"},
        PARIS,
        None,
    )
    assert call.id and call.id.startswith("call_") and call.duration_ms > 0
    calls = [e for e in turn.events if isinstance(e, ModelCallEvent)]
    assert [(c.model, c.usage.prompt_tokens, c.usage.completion_tokens) for c in calls] == [
        ("scripted", 31, 7),
        ("scripted", 58, 9),
    ]
    assert all(c.usage.calls == 1 and c.latency_ms and c.latency_ms > 0 for c in calls)
    assert (turn.usage.prompt_tokens, turn.usage.completion_tokens, turn.usage.calls) == (89, 16, 2)
    assert {e.author for e in turn.events if not isinstance(e, MessageEvent)} == {"weather_agent"}
    stamps = [e.at_ms for e in turn.events]
    assert stamps == sorted(stamps) and stamps[0] > 0
    assert scores(run) == {
        "tool_trajectory_avg_score": 1.0,
        "response_match_score": 1.0,
        "node_trajectory_avg_score": 1.0,
    }
    # the tool's result went back to the model as Pydantic AI sends it
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and json.loads(tool_message["content"]) == PARIS
    assert run.totals.usage.total_tokens == 105


async def test_a_multi_turn_case_keeps_the_conversation_and_the_state(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    @dataclass
    class Deps:
        unit: str
        looked_up: list[str] = field(default_factory=list)

    agent: Agent[Any, str] = Agent(model(server.url), name="planner", deps_type=Deps)

    @agent.tool
    def remember(ctx: RunContext[Any], city: str) -> str:
        """Note a city the user asked about."""
        ctx.deps.looked_up.append(city)
        return f"noted {city} in {ctx.deps.unit}"

    server.push(
        Reply.tools(("remember", {"city": "Paris"})),
        Reply.text("Noted Paris."),
        Reply.tools(("remember", {"city": "Tokyo"})),
        Reply.text("Noted Tokyo too."),
    )
    cases = evalset(
        case(
            "two_turns",
            {
                "invocation_id": "t1",
                "user_content": "Remember Paris",
                "expected_nodes": ["planner"],
            },
            {"invocation_id": "t2", "user_content": "And Tokyo", "expected_nodes": ["planner"]},
            session_input={"app_name": "trips", "user_id": "u1", "state": {"unit": "F"}},
            final_session_state={"unit": "F", "looked_up": ["Paris", "Tokyo"]},
        )
    )
    cfg = config(
        final_session_state_match={"threshold": 1.0, "state_match": "subset"},
        node_trajectory_avg_score={"threshold": 1.0},
    )
    run = await run_eval(PydanticAIAgent(agent), cases, cfg, tmp_path)
    trial = only_trial(run)
    assert trial.error is None
    assert [t.final_response for t in trial.turns] == ["Noted Paris.", "Noted Tokyo too."]
    assert [[c.result for c in t.tool_calls] for t in trial.turns] == [
        ["noted Paris in F"],
        ["noted Tokyo in F"],
    ]
    # the second turn's first request carries the whole first turn
    second = server.requests[2]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "assistant", "user"]
    assert second[0]["content"] == "Remember Paris" and second[3]["content"] == "Noted Paris."
    assert second[1]["tool_calls"][0]["function"]["name"] == "remember"
    assert second[-1]["content"] == "And Tokyo"
    state = trial.final_session_state
    assert state is not None
    assert {k: v for k, v in state.items() if k != "messages"} == {
        "unit": "F",
        "looked_up": ["Paris", "Tokyo"],
    }
    assert [m["kind"] for m in state["messages"]] == ["request", "response"] * 4
    conversation_ids = {m["conversation_id"] for m in state["messages"]}
    assert len(conversation_ids) == 1 and conversation_ids.pop().startswith("two_turns#0:")
    assert scores(run) == {"final_session_state_match": 1.0, "node_trajectory_avg_score": 1.0}


async def test_the_session_state_without_deps_is_the_case_state_and_the_conversation(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.push(Reply.text("hello"))
    cases = evalset(
        case(
            "plain",
            {"user_content": "hi"},
            session_input={"state": {"tier": "gold"}},
            final_session_state={"tier": "gold"},
        )
    )
    cfg = config(final_session_state_match={"threshold": 1.0, "state_match": "subset"})
    run = await run_eval(PydanticAIAgent(Agent(model(server.url))), cases, cfg, tmp_path)
    state = only_trial(run).final_session_state
    assert state is not None and state["tier"] == "gold" and len(state["messages"]) == 2
    assert scores(run) == {"final_session_state_match": 1.0}


async def test_deps_that_the_case_state_cannot_make_fail_the_trial_clearly(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    agent: Agent[int, str] = Agent(model(server.url), deps_type=int)
    cases = evalset(case("bad", {"user_content": "hi"}, session_input={"state": {"x": 1}}))
    trial = only_trial(
        await run_eval(PydanticAIAgent(agent, name="typed"), cases, config(), tmp_path)
    )
    assert trial.error is not None and trial.error.type == "TypeError"
    assert "session_input.state ['x'] does not make its deps_type int" in trial.error.message
    assert server.requests == []


async def test_a_deps_factory_gets_the_session_context(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    agent: Agent[dict[str, Any], str] = Agent(model(server.url), deps_type=dict)

    @agent.instructions
    def who(ctx: RunContext[dict[str, Any]]) -> str:
        return f"You serve {ctx.deps['user']}."

    seen: list[SessionContext] = []

    def deps(context: SessionContext) -> dict[str, Any]:
        seen.append(context)
        return {"user": context.session_input.user_id}

    server.push(Reply.text("hi"))
    cases = evalset(case("c", {"user_content": "hi"}, session_input={"user_id": "ada"}))
    run = await run_eval(PydanticAIAgent(agent, deps=deps), cases, config(), tmp_path)
    state = only_trial(run).final_session_state
    assert state is not None and state["user"] == "ada" and sorted(state) == ["messages", "user"]
    assert [c.case_id for c in seen] == ["c"]
    assert server.requests[0]["messages"][0] == {"role": "system", "content": "You serve ada."}


# -- tool errors ----------------------------------------------------------------------


async def test_a_tool_that_raises_ends_the_trial_with_the_call_and_its_error_recorded(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    def flaky_weather(location: str) -> dict[str, Any]:
        """Weather, except for Atlantis."""
        if location == "Atlantis":
            raise RuntimeError("weather service down")
        return get_weather(location)

    agent = Agent(model(server.url), name="flaky", tools=[flaky_weather])
    server.push(
        Reply.tools(("flaky_weather", {"location": "Paris"})),
        Reply.tools(("flaky_weather", {"location": "Atlantis"})),
    )
    cases = evalset(case("boom", {"user_content": "Paris and Atlantis?"}))
    trial = only_trial(await run_eval(PydanticAIAgent(agent), cases, config(), tmp_path))
    assert trial.error is not None
    assert (trial.error.kind, trial.error.type, trial.error.message) == (
        "exception",
        "RuntimeError",
        "weather service down",
    )
    [turn] = trial.turns
    assert turn.final_response is None
    assert kinds(trial) == ["node", "model_call", "tool_call", "model_call", "tool_call"]
    paris, atlantis = turn.tool_calls
    assert (paris.args, paris.result, paris.error) == ({"location": "Paris"}, PARIS, None)
    assert (atlantis.args, atlantis.result) == ({"location": "Atlantis"}, None)
    assert atlantis.error == "RuntimeError: weather service down"
    assert turn.usage.calls == 2
    state = trial.final_session_state
    assert state is not None and len(state["messages"]) == 4  # up to the call that raised


async def test_retries_the_model_is_sent_are_recorded_as_the_calls_errors(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    def lookup(city: str) -> str:
        """Look a city up."""
        if city == "Atlantis":
            raise ModelRetry("unknown city, ask for a real one")
        return f"{city}: ok"

    agent = Agent(model(server.url), name="retrying", tools=[lookup], retries=5)
    server.push(
        Reply.tools(("lookup", {"town": "Paris"})),  # invalid arguments
        Reply.tools(("lookup", {"city": "Atlantis"})),  # ModelRetry
        Reply.tools(("nope", {})),  # an unknown tool
        Reply.text(
            "Let me look that up.", tool_calls=[{"name": "lookup", "arguments": {"city": "Paris"}}]
        ),
        Reply.text("Paris is ok."),
    )
    cases = evalset(case("retries", {"user_content": "Paris?"}))
    trial = only_trial(await run_eval(PydanticAIAgent(agent), cases, config(), tmp_path))
    assert trial.error is None
    [turn] = trial.turns
    bad_args, atlantis, unknown, paris = turn.tool_calls
    assert bad_args.args == {"town": "Paris"} and bad_args.result is None
    assert bad_args.error is not None and bad_args.error.startswith("invalid arguments: ")
    assert "city: Field required" in bad_args.error
    assert atlantis.error == "unknown city, ask for a real one"
    assert unknown.name == "nope" and unknown.error and "Unknown tool name: 'nope'" in unknown.error
    assert (paris.result, paris.error) == ("Paris: ok", None)
    assert turn.intermediate_responses == ["Let me look that up."]
    assert turn.final_response == "Paris is ok."
    assert turn.usage.calls == 5


# -- hung agents, provider faults ------------------------------------------------------


async def test_a_hung_agent_is_stopped_by_the_trial_timeout(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.push(
        Reply.tools(("get_weather", {"location": "Paris"})),
        Reply.text("too late", delay_s=5.0),
    )
    cases = evalset(case("hung", {"user_content": "Weather in Paris?"}))
    started = time.perf_counter()
    run = await run_eval(
        PydanticAIAgent(weather_agent(server.url)), cases, config(), tmp_path, trial_timeout_s=0.5
    )
    assert time.perf_counter() - started < 4.0
    trial = only_trial(run)
    assert trial.error is not None and trial.error.kind == "timeout"
    assert trial.duration_ms < 2000
    # what happened before the timeout is kept
    [turn] = trial.turns
    assert [c.name for c in turn.tool_calls] == ["get_weather"]
    assert turn.tool_calls[0].result == PARIS
    assert kinds(trial) == ["node", "model_call", "tool_call"]


async def test_rate_limits_that_outlast_the_clients_retries_are_infrastructure_errors(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.handler = lambda body: Reply.error(429, "slow down", headers={"retry-after-ms": "1"})
    cases = evalset(case("limited", {"user_content": "hi"}), case("also", {"user_content": "hi"}))
    agent = PydanticAIAgent(Agent(model(server.url, max_retries=1), name="busy"))
    run = await run_eval(agent, cases, config(), tmp_path)
    errors = [r.trial.error for r in run.trials]
    assert [(e.kind, e.type) for e in errors if e] == [("infrastructure", "ModelHTTPError")] * 2
    assert all(e and "HTTP 429" in e.message for e in errors)
    assert len(server.requests) == 4  # each: the first try and the client's one retry
    totals = run.totals
    assert (totals.errored, totals.infrastructure_errors, totals.rated_trials) == (2, 2, 0)


async def test_server_errors_and_lost_connections_are_infrastructure_errors(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.handler = lambda body: Reply.error(503, "overloaded")
    with socket.socket() as sock:  # a port nothing listens on: connections are refused
        sock.bind(("127.0.0.1", 0))
        unreachable = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    cases = evalset(case("c", {"user_content": "hi"}))
    for url, expected in ((server.url, "HTTP 503"), (unreachable, "unreachable")):
        agent = PydanticAIAgent(Agent(model(url)), name="down")
        trial = only_trial(await run_eval(agent, cases, config(), tmp_path / expected[:4]))
        assert trial.error is not None and trial.error.kind == "infrastructure"
        assert expected in trial.error.message


async def test_a_refused_key_stops_the_run(server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    server.handler = lambda body: Reply.error(401, "bad key")
    cases = evalset(case("refused", {"user_content": "hi"}))
    with pytest.raises(ProviderAuthError, match="HTTP 401"):
        await run_eval(PydanticAIAgent(Agent(model(server.url))), cases, config(), tmp_path)


async def test_the_runs_rate_limits_hold_the_agents_model_calls(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.handler = lambda body: Reply.text("hi", delay_s=0.05)
    cases = evalset(*(case(f"c{i}", {"user_content": "hi"}) for i in range(6)))
    cfg = EvalConfig.model_validate(
        {
            "criteria": {"response_match_score": 0.5},
            "rate_limits": {"openai/scripted": {"max_concurrency": 1}},
        }
    )
    limiter = RateLimiter.from_config(cfg)
    async with ModelClient(limiter) as models:
        run = await evaluate(
            PydanticAIAgent(Agent(model(server.url))),
            cases,
            cfg,
            runs=1,
            max_concurrency=6,
            output_dir=tmp_path,
            models=models,
        )
    assert run.totals.trials == 6 and run.totals.errored == 0
    [budget] = limiter.budgets
    assert budget.peak_in_flight == 1 and len(server.requests) == 6


# -- agents delegating to agents -------------------------------------------------------


async def test_a_delegate_agents_run_is_a_step_under_its_caller(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    researcher = Agent(model(server.url), name="researcher", tools=[get_weather])
    router = Agent(model(server.url), name="router")

    @router.tool
    async def research(ctx: RunContext[Any], question: str) -> str:
        """Ask the researcher."""
        result = await researcher.run(question, usage=ctx.usage)
        return result.output

    server.push(
        Reply.tools(("research", {"question": "Tokyo?"}), prompt_tokens=20),  # router
        Reply.tools(("get_weather", {"location": "Tokyo"}), prompt_tokens=30),  # researcher
        Reply.text("Tokyo is sunny.", prompt_tokens=40),  # researcher's answer
        Reply.text("Sunny in Tokyo.", prompt_tokens=50),  # router's answer
    )
    cases = evalset(
        case(
            "delegated",
            {
                "user_content": "Tokyo?",
                "expected_nodes": ["router", "router/researcher"],
                "expected_tool_trajectory": [
                    {"name": "research", "args": {"question": "Tokyo?"}},
                    {"name": "get_weather", "args": {"location": "Tokyo"}},
                ],
            },
        )
    )
    cfg = config(
        node_trajectory_avg_score={"threshold": 1.0, "match_type": "EXACT"},
        tool_trajectory_avg_score={"threshold": 1.0},
    )
    run = await run_eval(PydanticAIAgent(router), cases, cfg, tmp_path)
    trial = only_trial(run)
    assert trial.error is None
    [turn] = trial.turns
    assert [(n.name, n.path) for n in turn.nodes] == [("router", []), ("researcher", ["router"])]
    assert [(e.kind, e.author) for e in turn.events if not isinstance(e, MessageEvent)] == [
        ("node", "router"),
        ("model_call", "router"),
        ("tool_call", "router"),
        ("node", "researcher"),
        ("model_call", "researcher"),
        ("tool_call", "researcher"),
        ("model_call", "researcher"),
        ("model_call", "router"),
    ]
    research_call, weather_call = turn.tool_calls
    assert research_call.result == "Tokyo is sunny." and weather_call.result == TOKYO
    assert turn.usage.prompt_tokens == 140 and turn.usage.calls == 4
    assert turn.intermediate_responses == []  # the delegate's answer is the tool's result
    assert scores(run) == {"node_trajectory_avg_score": 1.0, "tool_trajectory_avg_score": 1.0}


# -- loading, --model ------------------------------------------------------------------


AGENT_FILE = """
import os
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

provider = OpenAIProvider(base_url=os.environ["PAI_TEST_URL"], api_key="test-key")
assistant = Agent(OpenAIChatModel("scripted", provider=provider), instructions="Be brief.")
not_an_agent = provider
"""


async def test_a_file_spec_loads_the_agent_and_model_switches_it(
    server: ScriptedOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAI_TEST_URL", server.url)
    spec = tmp_path / "my_agent.py"
    spec.write_text(AGENT_FILE, encoding="utf-8")
    agent = load_agent(f"{spec}:assistant")
    assert isinstance(agent, PydanticAIAgent) and agent.name == "assistant"
    server.handler = lambda body: Reply.text(f"answered by {body['model']}")
    cases = evalset(case("hello", {"user_content": "hi", "expected_final_response": "x"}))
    run = await run_eval(agent, cases, config(), tmp_path / "a")
    assert only_trial(run).turns[0].final_response == "answered by scripted"
    assert [n.name for n in only_trial(run).turns[0].nodes] == ["assistant"]

    switched = load_agent(f"{spec}:assistant", model="bigger-model")
    run = await run_eval(switched, cases, config(), tmp_path / "b")
    assert only_trial(run).turns[0].final_response == "answered by bigger-model"
    assert server.requests[-1]["model"] == "bigger-model"  # same provider: same server

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    # Pydantic AI's own model string ("openai:" is the Responses API; the server has only
    # chat completions), its provider reading the key and base URL from the environment
    by_provider = load_agent(f"{spec}:assistant", model="openai-chat:gpt-4o-mini")
    assert by_provider.model == "openai:gpt-4o-mini"  # type: ignore[attr-defined]
    run = await run_eval(by_provider, cases, config(), tmp_path / "c")
    assert only_trial(run).turns[0].final_response == "answered by gpt-4o-mini"

    with pytest.raises(InputError, match="--model 'nope:x'"):
        load_agent(f"{spec}:assistant", model="nope:x")
    with pytest.raises(AgentLoadError, match="not an agent"):
        load_agent(f"{spec}:not_an_agent")


async def test_with_model_leaves_the_original_agent_alone(server: ScriptedOpenAIServer) -> None:
    server.handler = lambda body: Reply.text(body["model"])
    original = PydanticAIAgent(Agent(model(server.url)), name="a")
    switched = original.with_model("other")
    context = SessionContext(
        case_id="c",
        trial_index=0,
        session_id="c#0",
        session_input=SessionInput(),
        workdir_path=Path("/nonexistent"),
    )
    answers = []
    for agent in (switched, original, switched):
        session = await agent.start_session(context)
        answers.append(await session.respond(Message.of("hi"), TrajectoryRecorder()))
    assert answers == ["other", "scripted", "other"]


# -- the example -----------------------------------------------------------------------


async def test_the_pydantic_ai_weather_example_evaluates_with_the_weather_eval_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentflow_eval.demo import install as install_demo

    for name in ("AGENTFLOW_EXAMPLE_BASE_URL", "AGENTFLOW_EXAMPLE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(REPO)
    install_demo()  # the config's judge is the demo judge, as the front doors install it
    agent = load_agent("examples/pydantic_ai_weather/agent.py:agent")
    assert isinstance(agent, PydanticAIAgent) and agent.name == "weather_agent"
    loaded = load_evalset(REPO / "examples/weather/weather.evalset.json").eval_set
    cfg = load_config(REPO / "examples/weather/eval_config.json")
    run = await evaluate(agent, loaded, cfg, runs=2, output_dir=tmp_path)
    assert run.totals.trials == 4 and run.totals.errored == 0
    places = {
        r.trial.case_id: [c.args["location"] for t in r.trial.turns for c in t.tool_calls]
        for r in run.trials
    }
    assert places == {
        "weather_lookup_simple": ["New York"],
        "weather_lookup_multi_city": ["Tokyo", "London"],
    }
    for result in run.trials:
        [turn] = result.trial.turns
        assert [n.name for n in turn.nodes] == ["weather_agent"]
        assert all(c.result and "condition" in c.result for c in turn.tool_calls)
        assert turn.usage.calls == 2 and turn.usage.prompt_tokens > 0
        trajectory = next(c for c in result.criteria if c.criterion == "tool_trajectory_avg_score")
        assert trajectory.score == 1.0


async def test_tool_mocks_and_a_seeded_history_are_refused_before_the_run(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    """Pydantic AI agents take neither yet: a case with either is refused in one line,
    before any model call, rather than run the real tools or drop the history."""
    agent = PydanticAIAgent(weather_agent(server.url), name="weather")
    mocked = case(
        "mocked",
        {"user_content": "Paris?"},
        tool_mocks=[{"tool": "get_weather", "result": "sunny"}],
        expectations=["completes"],
    )
    with pytest.raises(
        InputError, match=r"case 'mocked': tool_mocks: agent 'weather_agent' runs its tools where"
    ):
        await run_eval(agent, evalset(mocked), config(), tmp_path)
    seeded = case(
        "seeded",
        {"user_content": "Paris?"},
        history=[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}],
        expectations=["completes"],
    )
    with pytest.raises(InputError, match=r"cannot start from a seeded history"):
        await run_eval(agent, evalset(seeded), config(), tmp_path / "seeded")
    assert server.request_count == 0
