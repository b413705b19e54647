"""The OpenAI Agents SDK adapter: real SDK agents (``Agent`` + ``Runner.run`` over an
``AsyncOpenAI`` chat-completions client) against the scripted server on 127.0.0.1, through
the whole pipeline. What the SDK did must reach the trial as it happened: tool calls with
their results and errors, model calls with their usage, agents and handoffs as steps,
multi-turn conversations and the run context as state, and failures as the right kind of
trial error."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    RunConfig,
    RunContextWrapper,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.frameworks import wrap
from agentflow_eval.agents.frameworks.openai_agents import OpenAIAgentsAgent
from agentflow_eval.agents.loader import AgentLoadError, load_agent
from agentflow_eval.criteria.config_files import config_from_data, load_config
from agentflow_eval.demo import install as install_demo
from agentflow_eval.files.loading import load_evalset
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.llm.retry import ProviderAuthError
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import (
    HandoffEvent,
    ModelCallEvent,
    RunResult,
    TrialResult,
)
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

set_tracing_disabled(True)  # the SDK's traces would go to OpenAI's platform

REPO = Path(__file__).resolve().parents[2]
WEATHER = {
    "Paris": {"location": "Paris", "condition": "rainy", "temperature": 61},
    "Tokyo": {"location": "Tokyo", "condition": "sunny", "temperature": 75},
}
CITY = re.compile(r"\b(Paris|Tokyo|Atlantis)\b")


@function_tool
def get_weather(ctx: RunContextWrapper[dict[str, Any]], location: str) -> str:
    """Get the current weather for a city.

    Args:
        location: The city to look up.
    """
    ctx.context["lookups"] = ctx.context.get("lookups", 0) + 1
    ctx.context["last_city"] = location
    if location not in WEATHER:
        raise RuntimeError("weather service down")
    return json.dumps(WEATHER[location])


def weather_model(body: dict[str, Any]) -> Reply:
    """A tool-calling model: a question naming a city gets a get_weather call, a tool result
    gets the answer (with fixed token counts, so usage can be checked per call)."""
    messages = body["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        try:
            report = json.loads(last["content"])
        except json.JSONDecodeError:
            return Reply.text(
                "I have no data for that city.", prompt_tokens=41, completion_tokens=8
            )
        return Reply.text(
            f"{report['location']} is {report['condition']}.", prompt_tokens=40, completion_tokens=9
        )
    found = CITY.search(str(last.get("content")))
    if found is None:
        return Reply.text("Which city?", prompt_tokens=20, completion_tokens=3)
    return Reply.tools(
        ("get_weather", {"location": found.group(1)}), prompt_tokens=25, completion_tokens=6
    )


def sdk_model(server: ScriptedOpenAIServer, *, max_retries: int = 0) -> OpenAIChatCompletionsModel:
    client = AsyncOpenAI(base_url=server.url, api_key="test-key", max_retries=max_retries)
    return OpenAIChatCompletionsModel(model="scripted", openai_client=client)


def weather_agent(server: ScriptedOpenAIServer, **settings: Any) -> Agent[Any]:
    return Agent(
        name="weather_agent",
        instructions="Use get_weather for every city asked about.",
        model=sdk_model(server, **settings),
        tools=[get_weather],
    )


def turn(text: str, **expected: Any) -> dict[str, Any]:
    return {"user_content": text, **expected}


def evalset(*cases: dict[str, Any]) -> EvalSet:
    return EvalSet.model_validate({"eval_set_id": "openai_agents", "eval_cases": list(cases)})


def config(**criteria: Any) -> EvalConfig:
    return config_from_data({"criteria": criteria})


async def run_eval(
    agent: AgentUnderTest,
    cases: EvalSet,
    criteria: EvalConfig,
    tmp_path: Path,
    **options: Any,
) -> RunResult:
    return await evaluate(agent, cases, criteria, **options, output_dir=tmp_path)


def scores(result: TrialResult) -> dict[str, float | None]:
    return {c.criterion: c.score for c in result.criteria}


async def test_a_turn_records_tool_calls_and_each_model_calls_usage(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(handler=weather_model) as server:
        run = await run_eval(
            wrap(weather_agent(server), name="agent"),
            evalset(
                {
                    "eval_id": "paris",
                    "conversation": [
                        turn(
                            "What's the weather in Paris?",
                            expected_tool_trajectory=[
                                {"name": "get_weather", "args": {"location": "Paris"}}
                            ],
                            expected_final_response="Paris is rainy.",
                        )
                    ],
                }
            ),
            config(tool_trajectory_avg_score=1.0, response_match_score=0.8),
            tmp_path,
            runs=2,
        )
    assert run.agent == "weather_agent"  # the SDK agent's own name, not the spec's attribute
    assert [r.status for r in run.trials] == ["passed", "passed"]
    result = run.trials[0]
    assert scores(result) == {"tool_trajectory_avg_score": 1.0, "response_match_score": 1.0}
    [only] = result.trial.turns
    assert [e.kind for e in only.events] == [
        "node",
        "model_call",
        "tool_call",
        "model_call",
        "message",
    ]
    times = [e.at_ms for e in only.events]
    assert times == sorted(times) and times[0] > 0
    [call] = only.tool_calls
    assert (call.name, call.args, call.error) == ("get_weather", {"location": "Paris"}, None)
    assert json.loads(call.result) == WEATHER["Paris"]
    assert call.id and call.duration_ms > 0
    model_calls = [e for e in only.events if isinstance(e, ModelCallEvent)]
    assert [
        (e.model, e.author, e.usage.prompt_tokens, e.usage.completion_tokens, e.usage.calls)
        for e in model_calls
    ] == [("scripted", "weather_agent", 25, 6, 1), ("scripted", "weather_agent", 40, 9, 1)]
    assert all(e.latency_ms is not None and e.latency_ms > 0 for e in model_calls)
    assert only.usage.total_tokens == 80 and only.usage.calls == 2
    assert [n.name for n in only.nodes] == ["weather_agent"]
    assert only.final_response == "Paris is rainy."
    assert run.totals.usage.total_tokens == 160


async def test_turns_continue_one_conversation_and_the_run_context_is_the_state(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer(handler=weather_model) as server:
        run = await run_eval(
            wrap(weather_agent(server), name="agent"),
            evalset(
                {
                    "eval_id": "two_cities",
                    "session_input": {
                        "app_name": "weather_app",
                        "user_id": "u1",
                        "state": {"plan": "pro"},
                    },
                    "conversation": [
                        turn("What's the weather in Paris?"),
                        turn("And in Tokyo?", expected_final_response="Tokyo is sunny."),
                    ],
                    "final_session_state": {"plan": "pro", "lookups": 2, "last_city": "Tokyo"},
                }
            ),
            config(final_session_state_match=1.0, response_match_score=0.8),
            tmp_path,
            runs=2,
        )
        requests = list(server.requests)
    assert [r.status for r in run.trials] == ["passed", "passed"]
    for result in run.trials:  # each trial starts from session_input.state, not another's
        assert result.trial.final_session_state == {
            "plan": "pro",
            "lookups": 2,
            "last_city": "Tokyo",
        }
        assert [t.final_response for t in result.trial.turns] == [
            "Paris is rainy.",
            "Tokyo is sunny.",
        ]
        assert [c.args["location"] for t in result.trial.turns for c in t.tool_calls] == [
            "Paris",
            "Tokyo",
        ]
    second_turns = [r for r in requests if r["messages"][-1].get("content") == "And in Tokyo?"]
    assert len(second_turns) == 2
    for body in second_turns:  # the first turn's messages came along
        messages = body["messages"]
        assert [m["role"] for m in messages] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
        ]
        assert messages[1]["content"] == "What's the weather in Paris?"
        assert messages[2]["tool_calls"][0]["function"]["name"] == "get_weather"
        assert json.loads(messages[3]["content"]) == WEATHER["Paris"]
        assert messages[4]["content"] == "Paris is rainy."


async def test_a_handoff_is_a_step_and_the_next_turn_stays_with_the_specialist(
    tmp_path: Path,
) -> None:
    def triage_model(body: dict[str, Any]) -> Reply:
        offered = [t["function"]["name"] for t in body.get("tools") or []]
        if "transfer_to_billing_agent" in offered and body["messages"][-1]["role"] == "user":
            return Reply.tools(("transfer_to_billing_agent", {}))
        return Reply.text("Your invoice was sent again.", prompt_tokens=30, completion_tokens=7)

    with ScriptedOpenAIServer(handler=triage_model) as server:
        model = sdk_model(server)
        billing = Agent(name="billing_agent", instructions="Resend invoices.", model=model)
        triage = Agent(
            name="triage_agent",
            instructions="Hand billing questions to billing.",
            model=model,
            handoffs=[billing],
        )
        run = await run_eval(
            wrap(triage, name="agent"),
            evalset(
                {
                    "eval_id": "billing",
                    "conversation": [
                        turn("Resend my invoice", expected_nodes=["triage_agent", "billing_agent"]),
                        turn("Thanks, once more please", expected_nodes=["billing_agent"]),
                    ],
                },
                {
                    "eval_id": "expects_refunds",
                    "conversation": [
                        turn("Resend my invoice", expected_nodes=["triage_agent", "refunds_agent"])
                    ],
                },
            ),
            config(node_trajectory_avg_score=1.0),
            tmp_path,
            runs=1,
        )
        requests = list(server.requests)
    by_case = {r.trial.case_id: r for r in run.trials}
    right, wrong = by_case["billing"], by_case["expects_refunds"]
    assert right.status == "passed" and scores(right) == {"node_trajectory_avg_score": 1.0}
    assert wrong.status == "failed"
    assert (scores(wrong)["node_trajectory_avg_score"] or 0) < 1.0
    first, second = right.trial.turns
    assert [(e.kind, e.author) for e in first.events] == [
        ("node", "triage_agent"),
        ("model_call", "triage_agent"),
        ("handoff", "triage_agent"),
        ("node", "billing_agent"),
        ("model_call", "billing_agent"),
        ("message", None),  # the answer, recorded by the trial
    ]
    [handoff] = [e for e in first.events if isinstance(e, HandoffEvent)]
    assert (handoff.source, handoff.target) == ("triage_agent", "billing_agent")
    assert first.tool_calls == []  # the transfer_to_billing_agent call is the handoff
    assert [n.name for n in second.nodes] == ["billing_agent"]
    assert second.final_response == "Your invoice was sent again."
    # the second turn went straight to billing, with the whole conversation
    [to_billing] = [
        r for r in requests if r["messages"][-1].get("content") == "Thanks, once more please"
    ]
    assert to_billing["messages"][0] == {"role": "system", "content": "Resend invoices."}
    assert "tools" not in to_billing or not to_billing["tools"]


async def test_a_tool_that_raises_is_recorded_with_its_error(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(handler=weather_model) as server:
        run = await run_eval(
            wrap(weather_agent(server), name="agent"),
            evalset({"eval_id": "atlantis", "conversation": [turn("Weather in Atlantis?")]}),
            config(response_match_score=0.5),
            tmp_path,
            runs=1,
        )
        requests = list(server.requests)
    [result] = run.trials
    assert result.trial.error is None  # the SDK told the model, and the agent answered
    [call] = result.trial.turns[0].tool_calls
    assert (call.name, call.args) == ("get_weather", {"location": "Atlantis"})
    assert call.error == "weather service down" and call.result is None
    assert result.trial.turns[0].final_response == "I have no data for that city."
    told = requests[-1]["messages"][-1]
    assert told["role"] == "tool" and "weather service down" in told["content"]


async def test_a_tool_error_the_sdk_raises_fails_the_trial_with_what_happened(
    tmp_path: Path,
) -> None:
    @function_tool(failure_error_function=None)
    def get_weather(location: str) -> str:
        """Get the current weather for a city."""
        raise RuntimeError("weather service down")

    with ScriptedOpenAIServer(handler=weather_model) as server:
        agent = Agent(name="strict_agent", model=sdk_model(server), tools=[get_weather])
        run = await run_eval(
            wrap(agent, name="agent"),
            evalset({"eval_id": "strict", "conversation": [turn("Weather in Paris?")]}),
            config(response_match_score=0.5),
            tmp_path,
            runs=1,
        )
    [result] = run.trials
    error = result.trial.error
    assert error is not None and error.kind == "exception" and error.type == "UserError"
    assert "weather service down" in error.message
    events = result.trial.turns[0].events
    assert [e.kind for e in events] == ["node", "model_call", "tool_call"]
    [call] = result.trial.turns[0].tool_calls
    assert call.args == {"location": "Paris"}
    assert call.error is not None and call.error.startswith("cut short: UserError")


async def test_a_hung_model_call_is_stopped_by_the_trial_timeout(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(handler=lambda body: Reply.text("late", delay_s=5)) as server:
        started = time.perf_counter()
        run = await run_eval(
            wrap(weather_agent(server), name="agent"),
            evalset({"eval_id": "hung", "conversation": [turn("Weather in Paris?")]}),
            config(response_match_score=0.5),
            tmp_path,
            runs=1,
            trial_timeout_s=0.5,
        )
        elapsed = time.perf_counter() - started
    [result] = run.trials
    assert result.trial.error is not None and result.trial.error.kind == "timeout"
    assert elapsed < 3.0
    assert [e.kind for e in result.trial.turns[0].events] == ["node"]  # the call never answered


async def test_a_hung_tool_is_stopped_by_the_trial_timeout_and_recorded(tmp_path: Path) -> None:
    @function_tool
    async def get_weather(location: str) -> str:
        """Get the current weather for a city."""
        await asyncio.sleep(30)
        return "never"

    with ScriptedOpenAIServer(handler=weather_model) as server:
        agent = Agent(name="slow_agent", model=sdk_model(server), tools=[get_weather])
        started = time.perf_counter()
        run = await run_eval(
            wrap(agent, name="agent"),
            evalset({"eval_id": "slow", "conversation": [turn("Weather in Paris?")]}),
            config(response_match_score=0.5),
            tmp_path,
            runs=1,
            trial_timeout_s=0.5,
        )
        elapsed = time.perf_counter() - started
    [result] = run.trials
    assert result.trial.error is not None and result.trial.error.kind == "timeout"
    assert elapsed < 3.0
    [call] = result.trial.turns[0].tool_calls
    assert call.args == {"location": "Paris"}
    assert call.error == "cut short: the turn was cancelled (trial timeout)"


async def test_rate_limits_past_the_clients_retries_are_infrastructure_errors(
    tmp_path: Path,
) -> None:
    def limited(body: dict[str, Any]) -> Reply:
        if "Tokyo" in json.dumps(body["messages"]):
            return Reply.error(429, "rate limited", headers={"retry-after-ms": "5"})
        return weather_model(body)

    with ScriptedOpenAIServer(handler=limited) as server:
        run = await run_eval(
            wrap(weather_agent(server, max_retries=1), name="agent"),
            evalset(
                {
                    "eval_id": "ok",
                    "conversation": [
                        turn("Weather in Paris?", expected_final_response="Paris is rainy.")
                    ],
                },
                {"eval_id": "limited", "conversation": [turn("Weather in Tokyo?")]},
            ),
            config(response_match_score=0.8),
            tmp_path,
            runs=1,
        )
        tokyo_requests = [r for r in server.requests if "Tokyo" in json.dumps(r["messages"])]
    by_case = {r.trial.case_id: r for r in run.trials}
    error = by_case["limited"].trial.error
    assert error is not None and error.kind == "infrastructure" and "HTTP 429" in error.message
    assert len(tokyo_requests) == 2  # the client's one retry, then it gave up
    assert by_case["ok"].status == "passed"
    totals = run.totals
    assert (totals.infrastructure_errors, totals.rated_trials, totals.passed) == (1, 1, 1)
    assert totals.pass_rate == 1.0  # left out of the pass rate


async def test_a_refused_key_stops_the_run(tmp_path: Path) -> None:
    refusing = ScriptedOpenAIServer(handler=lambda body: Reply.error(401, "bad key"))
    with refusing as server, pytest.raises(ProviderAuthError, match="authentication failed"):
        await run_eval(
            wrap(weather_agent(server), name="agent"),
            evalset({"eval_id": "refused", "conversation": [turn("Weather in Paris?")]}),
            config(response_match_score=0.5),
            tmp_path,
            runs=1,
        )


async def test_the_runs_rate_limits_hold_the_sdks_model_calls(tmp_path: Path) -> None:
    criteria = config_from_data(
        {
            "criteria": {"response_match_score": 0.8},
            "rate_limits": {"openai/scripted": {"max_concurrency": 1}},
        }
    )
    limiter = RateLimiter.from_config(criteria)
    with ScriptedOpenAIServer(handler=weather_model, latency_s=0.02) as server:
        async with ModelClient(limiter) as models:
            run = await evaluate(
                wrap(weather_agent(server), name="agent"),
                evalset(
                    *(
                        {
                            "eval_id": f"c{i}",
                            "conversation": [
                                turn("Weather in Paris?", expected_final_response="Paris is rainy.")
                            ],
                        }
                        for i in range(4)
                    )
                ),
                criteria,
                runs=1,
                max_concurrency=4,
                output_dir=tmp_path,
                models=models,
            )
        served = server.request_count
    assert [r.status for r in run.trials] == ["passed"] * 4
    [budget] = limiter.budgets
    assert served == 8 and budget.peak_in_flight == 1 and budget.in_flight == 0


async def test_max_turns_ends_the_trial_as_max_steps(tmp_path: Path) -> None:
    always_a_tool = lambda body: Reply.tools(("get_weather", {"location": "Paris"}))  # noqa: E731
    with ScriptedOpenAIServer(handler=always_a_tool) as server:
        run = await run_eval(
            OpenAIAgentsAgent(weather_agent(server), max_turns=2),
            evalset({"eval_id": "loop", "conversation": [turn("Weather in Paris?")]}),
            config(response_match_score=0.5),
            tmp_path,
            runs=1,
        )
    [result] = run.trials
    assert result.trial.error is not None and result.trial.error.kind == "max_steps"
    assert len(result.trial.turns[0].tool_calls) == 2  # what it did before the limit


AGENT_FILE = """
from agents import Agent, OpenAIChatCompletionsModel
from openai import AsyncOpenAI

support_agent = Agent(
    name="support_agent",
    instructions="Answer briefly.",
    model=OpenAIChatCompletionsModel(
        model="scripted",
        openai_client=AsyncOpenAI(base_url={url!r}, api_key="test-key", max_retries=0),
    ),
)
"""


async def test_a_file_spec_loads_the_sdk_agent_and_model_switches_it(tmp_path: Path) -> None:
    answer = "Happy to help."
    with ScriptedOpenAIServer(handler=lambda body: Reply.text(answer)) as server:
        path = tmp_path / "support.py"
        path.write_text(AGENT_FILE.format(url=server.url))
        agent = load_agent(f"{path}:support_agent")
        assert isinstance(agent, OpenAIAgentsAgent) and agent.name == "support_agent"
        cases = evalset(
            {"eval_id": "hello", "conversation": [turn("Hi", expected_final_response=answer)]}
        )
        run = await run_eval(agent, cases, config(response_match_score=0.8), tmp_path / "a", runs=1)
        assert [r.status for r in run.trials] == ["passed"]
        assert {r["model"] for r in server.requests} == {"scripted"}
        server.requests.clear()
        switched = load_agent(f"{path}:support_agent", model="scripted-large")
        run = await run_eval(
            switched, cases, config(response_match_score=0.8), tmp_path / "b", runs=1
        )
        assert [r.status for r in run.trials] == ["passed"]
        # the same client (base URL, key), another model
        assert {r["model"] for r in server.requests} == {"scripted-large"}
        headers = server.request_headers[-1]
        assert headers["authorization"] == "Bearer test-key"
        [call] = [e for e in run.trials[0].trial.turns[0].events if isinstance(e, ModelCallEvent)]
        assert call.model == "scripted-large"


def test_only_an_sdk_agent_is_taken(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"expected an agents\.Agent"):
        wrap(RunConfig(), name="config")
    path = tmp_path / "not_an_agent.py"
    path.write_text("from agents import RunConfig\n\nconfig = RunConfig()\n")
    with pytest.raises(AgentLoadError, match="the openai-agents adapter cannot evaluate it"):
        load_agent(f"{path}:config")


async def test_the_example_runs_the_weather_eval_set(tmp_path: Path) -> None:
    install_demo()  # the eval config's judge model, as the front doors install it
    agent = load_agent("examples.openai_agents_weather")
    assert isinstance(agent, OpenAIAgentsAgent) and agent.name == "weather_agent"
    loaded = load_evalset(REPO / "examples/weather/weather.evalset.json")
    criteria = load_config(REPO / "examples/weather/eval_config.json")
    run = await evaluate(agent, loaded.eval_set, criteria, output_dir=tmp_path)
    assert run.totals.trials == 10 and run.totals.errored == 0
    places = {
        result.trial.case_id: [
            call.args["location"] for turn in result.trial.turns for call in turn.tool_calls
        ]
        for result in run.trials
    }
    assert places == {
        "weather_lookup_simple": ["New York"],
        "weather_lookup_multi_city": ["Tokyo", "London"],
    }
    for result in run.trials:
        assert scores(result)["tool_trajectory_avg_score"] == 1.0
        for call in result.trial.turns[0].tool_calls:
            assert json.loads(call.result)["location"] == call.args["location"]
        assert result.trial.turns[0].usage.calls == 2


async def test_a_tool_awaiting_human_approval_fails_the_trial_with_a_reason(
    tmp_path: Path,
) -> None:
    @function_tool(needs_approval=True)
    def get_weather(location: str) -> str:
        """Get the current weather for a city."""
        return "sunny"

    with ScriptedOpenAIServer(handler=weather_model) as server:
        agent = Agent(name="careful_agent", model=sdk_model(server), tools=[get_weather])
        run = await run_eval(
            wrap(agent, name="agent"),
            evalset({"eval_id": "approval", "conversation": [turn("Weather in Paris?")]}),
            config(response_match_score=0.5),
            tmp_path,
            runs=1,
        )
    [result] = run.trials
    error = result.trial.error
    assert error is not None and error.kind == "exception" and error.type == "ApprovalRequired"
    assert "approval of get_weather" in error.message
    [call] = result.trial.turns[0].tool_calls
    assert call.args == {"location": "Paris"} and call.result is None
    assert call.error == "not run: awaiting a human's approval"


# -- tool mocks and seeded history -------------------------------------------------------

BOOKED: list[str] = []


@function_tool
def book_flight(destination: str) -> str:
    """Book a flight (a side effect no nightly run may have).

    Args:
        destination: Where to fly.
    """
    BOOKED.append(destination)
    return f"booked {destination}"


def travel_model(body: dict[str, Any]) -> Reply:
    """The triage agent hands off to the booking agent, which books, then answers with what
    the tool said."""
    messages = body["messages"]
    last = messages[-1]
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    handed_off = "booking_agent" in str(last.get("content"))  # the transfer's output
    if last["role"] == "tool" and not handed_off:
        return Reply.text(f"Done: {last['content']}")
    if "transfer_to_booking_agent" in tools:
        return Reply.tools(("transfer_to_booking_agent", {}))
    return Reply.tools(("book_flight", {"destination": "Oslo"}))


async def test_mocks_answer_the_tools_of_agents_handed_off_to_and_the_tool_never_runs(
    tmp_path: Path,
) -> None:
    BOOKED.clear()
    with ScriptedOpenAIServer(handler=travel_model) as server:
        booking = Agent(name="booking_agent", model=sdk_model(server), tools=[book_flight])
        triage = Agent(name="triage", model=sdk_model(server), handoffs=[booking])
        case = {
            "eval_id": "book",
            "conversation": [
                turn("Book me a flight to Oslo.", expected_final_response="Done: confirmation X1")
            ],
            "tool_mocks": [{"tool": "book_flight", "result": "confirmation X1"}],
        }
        run = await run_eval(
            wrap(triage, name="agent"),
            evalset(case),
            config(response_match_score=0.5),
            tmp_path,
            runs=2,
        )
        failing = {**case, "eval_id": "no_seats"}
        failing["tool_mocks"] = [{"tool": "book_flight", "error": "no seats left"}]
        failed = await run_eval(
            wrap(triage, name="agent"),
            evalset(failing),
            config(response_match_score=0.5),
            tmp_path / "f",
            runs=1,
        )
    assert BOOKED == []  # neither run reached the tool's own code
    for result in run.trials:
        (call,) = result.trial.turns[0].tool_calls[-1:]
        assert (call.name, call.served_by, call.result) == (
            "book_flight",
            "mock",
            "confirmation X1",
        )
        assert result.trial.turns[0].final_response == "Done: confirmation X1"
    (call,) = failed.trials[0].trial.turns[0].tool_calls[-1:]
    assert (call.served_by, call.result, call.error) == ("mock", None, "no seats left")
    assert triage.handoffs == [booking] and booking.tools == [book_flight]  # left as they were


async def test_a_seeded_history_is_the_conversation_the_sdk_agent_continues(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer(handler=weather_model) as server:
        case = {
            "eval_id": "next",
            "history": [
                {"role": "user", "content": "What's the weather in Paris?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {
                                "name": "get_weather",
                                "arguments": '{"location": "Paris"}',
                            },
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(WEATHER["Paris"])},
                {"role": "assistant", "content": "Paris is rainy."},
            ],
            "conversation": [turn("And in Tokyo?", expected_final_response="Tokyo is sunny.")],
        }
        await run_eval(
            wrap(weather_agent(server), name="agent"),
            evalset(case),
            config(response_match_score=0.5),
            tmp_path,
            runs=1,
        )
        first = server.requests[0]["messages"]
    sent = [
        (m["role"], m.get("content"), m.get("tool_calls")) for m in first if m["role"] != "system"
    ]
    assert sent[0] == ("user", "What's the weather in Paris?", None)
    assert sent[1][0] == "assistant"
    assert sent[1][2][0]["function"]["name"] == "get_weather"
    assert sent[2][:2] == ("tool", json.dumps(WEATHER["Paris"]))
    assert sent[3][:2] == ("assistant", "Paris is rainy.")
    assert sent[4][:2] == ("user", "And in Tokyo?")
