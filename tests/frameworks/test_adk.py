"""Google ADK agents evaluated as they are: real ``LlmAgent``s on ``LiteLlm``, their model a
scripted OpenAI-compatible server on 127.0.0.1, run through the whole pipeline.

What is checked: a turn's events in order (node visits, model calls with their usage, tool
calls with results and errors, handoffs, the answer); one ADK session per trial, seeded
from ``session_input``, kept across a case's turns, its final state recorded; a tool error,
a hung model, rate limits past LiteLLM's retries and a refused key each ending the trial
(or the run) as they should; ``node_trajectory_avg_score`` on sub-agent transfers; the
loader's spec forms (``file.py:attr``, an ADK ``App`` found as ``app``) and ``--model``;
the ADK example; and ADK 2.13's own evaluator's scores, matched case by case.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.apps import App
from google.adk.models.lite_llm import LiteLlm
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.tool_context import ToolContext
from google.adk.workflow import START, Workflow

from agentflow_eval.agents.frameworks import adk
from agentflow_eval.agents.loader import AgentLoadError, load_agent
from agentflow_eval.errors import InputError
from agentflow_eval.files.loading import load_config, load_evalset
from agentflow_eval.llm.retry import ProviderAuthError
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import (
    HandoffEvent,
    ModelCallEvent,
    RunResult,
    Trial,
)
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from agentflow_eval.testing.openai_server import echo_handler
from examples.weather.agent import get_weather
from tests.fixtures.adk213.equality import agent as equality

REPO = Path(__file__).resolve().parents[2]
ADK213 = REPO / "tests" / "fixtures" / "adk213"


# -- helpers ---------------------------------------------------------------------------


def model(server: ScriptedOpenAIServer, **kwargs: Any) -> LiteLlm:
    return LiteLlm(model="openai/scripted", api_base=server.url, api_key="scripted-key", **kwargs)


def weather_agent(server: ScriptedOpenAIServer, **kwargs: Any) -> LlmAgent:
    return LlmAgent(
        name="weather_agent",
        model=model(server),
        description="Looks up the weather.",
        instruction="Use get_weather for every city.",
        tools=[get_weather],
        **kwargs,
    )


def eval_set(*cases: dict[str, Any]) -> EvalSet:
    return EvalSet.model_validate({"eval_set_id": "adk", "eval_cases": list(cases)})


def config(**criteria: CriterionConfig) -> EvalConfig:
    return EvalConfig(criteria=criteria or {"response_match_score": CriterionConfig(threshold=0.5)})


async def run(
    agent: Any, cases: EvalSet, cfg: EvalConfig, tmp_path: Path, **options: Any
) -> RunResult:
    options.setdefault("runs", 1)
    options.setdefault("max_concurrency", 1)  # the scripted replies are one queue
    wrapped = agent if isinstance(agent, adk.AdkAgent) else adk.wrap(agent, name="adk_agent")
    return await evaluate(wrapped, cases, cfg, **options, output_dir=tmp_path)


def only_trial(result: RunResult) -> Trial:
    (trial,) = [t.trial for t in result.trials]
    return trial


def kinds(trial: Trial, turn: int = 0) -> list[tuple[str, str | None]]:
    return [(event.kind, event.author) for event in trial.turns[turn].events]


def user_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if isinstance(m.get("content"), str)]


# -- one turn --------------------------------------------------------------------------


async def test_a_turn_records_its_steps_model_calls_tool_calls_and_answer_in_order(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.push(
        Reply.tools(
            ("get_weather", {"location": "Tokyo"}),
            content="Let me look that up.",
            prompt_tokens=11,
            completion_tokens=7,
        ),
        Reply.text("Tokyo is sunny at 75°F.", prompt_tokens=29, completion_tokens=9),
    )
    cases = eval_set(
        {
            "eval_id": "tokyo",
            "conversation": [
                {
                    "user_content": "What's the weather in Tokyo?",
                    "expected_tool_trajectory": [
                        {"name": "get_weather", "args": {"location": "Tokyo"}}
                    ],
                    "expected_final_response": "Tokyo is sunny at 75°F.",
                    "expected_nodes": ["weather_agent"],
                }
            ],
        }
    )
    cfg = config(
        tool_trajectory_avg_score=CriterionConfig(threshold=1.0),
        response_match_score=CriterionConfig(threshold=1.0),
        node_trajectory_avg_score=CriterionConfig(threshold=1.0),
    )
    result = await run(weather_agent(server), cases, cfg, tmp_path)

    trial = only_trial(result)
    assert trial.error is None and result.totals.passed == 1
    assert kinds(trial) == [
        ("node", "weather_agent"),
        ("model_call", "weather_agent"),
        ("message", "weather_agent"),  # said with the call, before it
        ("tool_call", "weather_agent"),
        ("model_call", "weather_agent"),
        ("message", None),  # the answer, appended by the trial
    ]
    turn = trial.turns[0]
    (call,) = turn.tool_calls
    assert (call.name, call.args) == ("get_weather", {"location": "Tokyo"})
    assert call.result == {
        "location": "Tokyo",
        "condition": "sunny",
        "temperature": 75,
        "unit": "°F",
    }
    assert call.error is None and call.id and call.id.startswith("call_")
    calls = [e for e in turn.events if isinstance(e, ModelCallEvent)]
    assert [
        (
            c.model,
            c.usage.prompt_tokens,
            c.usage.completion_tokens,
            c.usage.total_tokens,
            c.usage.calls,
        )
        for c in calls
    ] == [("scripted", 11, 7, 18, 1), ("scripted", 29, 9, 38, 1)]
    assert (turn.usage.prompt_tokens, turn.usage.completion_tokens, turn.usage.calls) == (40, 16, 2)
    assert turn.final_response == "Tokyo is sunny at 75°F."
    assert turn.intermediate_responses == ["Let me look that up."]
    times = [event.at_ms for event in turn.events]
    assert times == sorted(times)
    assert [n.name for n in turn.nodes] == ["weather_agent"]
    # the trial's own session in ADK: the session state is recorded even when unused
    assert trial.final_session_state == {}


def whoami(tool_context: ToolContext) -> dict[str, Any]:
    """Who the session is for."""
    session = tool_context.session
    return {"app": session.app_name, "user": session.user_id, "session": session.id}


async def test_session_input_seeds_each_trials_own_adk_session(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.handler = lambda body: (
        Reply.text("done")
        if body["messages"][-1]["role"] == "tool"
        else Reply.tools(("whoami", {}))
    )
    agent = LlmAgent(
        name="assistant", model=model(server), instruction="Units: {units?}", tools=[whoami]
    )
    cases = eval_set(
        {
            "eval_id": "seeded",
            "conversation": [{"user_content": "who am I?", "expected_final_response": "done"}],
            "session_input": {
                "app_name": "weather_app",
                "user_id": "alice",
                "state": {"units": "F", "user:tier": "gold"},
            },
        },
        {
            "eval_id": "unseeded",
            "conversation": [{"user_content": "who am I?", "expected_final_response": "done"}],
        },
    )
    result = await run(agent, cases, config(), tmp_path, runs=2)

    seen = {
        (t.trial.case_id, t.trial.trial_index): t.trial.tool_calls[0].result for t in result.trials
    }
    assert {key: (r["app"], r["user"]) for key, r in seen.items()} == {
        ("seeded", 0): ("weather_app", "alice"),
        ("seeded", 1): ("weather_app", "alice"),
        ("unseeded", 0): ("assistant", adk.DEFAULT_USER_ID),  # the agent's name, ADK's user
        ("unseeded", 1): ("assistant", adk.DEFAULT_USER_ID),
    }
    assert len({r["session"] for r in seen.values()}) == 4  # a session of its own each
    assert all(r["session"].startswith(f"{case}#{index}-") for (case, index), r in seen.items())
    assert "Units: F" in server.requests[0]["messages"][0]["content"]  # state templated
    states = {t.trial.case_id: t.trial.final_session_state for t in result.trials}
    assert states == {"seeded": {"units": "F", "user:tier": "gold"}, "unseeded": {}}


# -- many turns ------------------------------------------------------------------------


def remember_weather(location: str, tool_context: ToolContext) -> dict[str, Any]:
    """Look up a city's weather and remember the city."""
    tool_context.state["last_city"] = location
    return get_weather(location)


async def test_a_multi_turn_case_keeps_the_conversation_and_its_state(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.push(
        Reply.tools(("remember_weather", {"location": "Paris"})),
        Reply.text("Paris is rainy at 61°F."),
        Reply.text("Still rainy in Paris tomorrow."),
    )
    agent = LlmAgent(
        name="weather_agent", model=model(server), instruction="Help.", tools=[remember_weather]
    )
    cases = eval_set(
        {
            "eval_id": "two_turns",
            "conversation": [
                {
                    "user_content": "Weather in Paris?",
                    "expected_final_response": "Paris is rainy at 61°F.",
                },
                {
                    "user_content": "And tomorrow?",
                    "expected_final_response": "Still rainy in Paris tomorrow.",
                },
            ],
            "session_input": {"app_name": "weather_app", "user_id": "bob", "state": {"units": "F"}},
            "final_session_state": {"units": "F", "last_city": "Paris"},
        }
    )
    cfg = config(
        response_match_score=CriterionConfig(threshold=1.0),
        final_session_state_match=CriterionConfig(threshold=1.0),
    )
    result = await run(agent, cases, cfg, tmp_path)

    trial = only_trial(result)
    assert trial.error is None and result.totals.passed == 1
    assert [t.final_response for t in trial.turns] == [
        "Paris is rainy at 61°F.",
        "Still rainy in Paris tomorrow.",
    ]
    assert [len(t.tool_calls) for t in trial.turns] == [1, 0]
    assert trial.final_session_state == {"units": "F", "last_city": "Paris"}
    # the second turn's request holds the whole first turn, then the new question
    second_turn = server.requests[2]["messages"]
    assert [m["role"] for m in second_turn] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert [m.get("content") for m in second_turn if m["role"] in ("user", "assistant")] == [
        "Weather in Paris?",
        None,  # the tool call
        "Paris is rainy at 61°F.",
        "And tomorrow?",
    ]
    assert json.loads(second_turn[3]["content"])["location"] == "Paris"
    assert [n.name for n in trial.turns[1].nodes] == ["weather_agent"]


# -- failures --------------------------------------------------------------------------


def flaky_weather(location: str) -> dict[str, Any]:
    """Look up the weather."""
    raise RuntimeError("weather service down")


async def test_a_tool_that_raises_is_recorded_with_its_error(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.push(Reply.tools(("flaky_weather", {"location": "Oslo"})), Reply.text("unused"))
    agent = LlmAgent(name="weather_agent", model=model(server), tools=[flaky_weather])
    cases = eval_set({"eval_id": "boom", "conversation": [{"user_content": "Oslo?"}]})
    result = await run(agent, cases, config(), tmp_path)

    trial = only_trial(result)
    assert trial.error is not None
    assert (trial.error.kind, trial.error.type) == ("exception", "RuntimeError")
    assert trial.error.message == "weather service down"
    (call,) = trial.turns[0].tool_calls
    assert (call.name, call.args, call.result) == ("flaky_weather", {"location": "Oslo"}, None)
    assert call.error == "RuntimeError: weather service down"
    assert trial.turns[0].final_response is None
    assert result.totals.errored == 1 and result.totals.infrastructure_errors == 0
    server._script.clear()


async def test_a_hung_model_call_is_stopped_by_the_trial_timeout(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.push(Reply.text("too late", delay_s=30))
    agent = LlmAgent(name="slow_agent", model=model(server))
    cases = eval_set({"eval_id": "hung", "conversation": [{"user_content": "hello?"}]})
    started = time.perf_counter()
    result = await run(agent, cases, config(), tmp_path, trial_timeout_s=0.5)
    elapsed = time.perf_counter() - started

    trial = only_trial(result)
    assert trial.error is not None and trial.error.kind == "timeout"
    assert trial.duration_ms < 10_000 and elapsed < 15  # not the model's 30 s
    # ADK yields nothing before the model answers: the turn ended with no event
    assert len(trial.turns) == 1 and trial.turns[0].events == []
    assert trial.final_session_state == {}
    # the cancelled turn took ADK's invocation task with it
    left = [
        task
        for task in asyncio.all_tasks()
        if "google/adk" in getattr(getattr(task.get_coro(), "cr_code", None), "co_filename", "")
    ]
    assert left == []


async def test_rate_limits_past_litellms_retries_are_infrastructure_errors(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    def handler(body: dict[str, Any]) -> Reply:
        if "busy" in user_texts(body)[-1]:
            return Reply.error(429, "rate limited")
        return Reply.text("fine")

    server.handler = handler
    agent = LlmAgent(name="assistant", model=model(server, num_retries=0))
    cases = eval_set(
        {
            "eval_id": "busy",
            "conversation": [{"user_content": "busy now", "expected_final_response": "fine"}],
        },
        {
            "eval_id": "calm",
            "conversation": [{"user_content": "calm now", "expected_final_response": "fine"}],
        },
    )
    result = await run(agent, cases, config(), tmp_path, runs=2, max_concurrency=4)

    errors = [t.trial.error for t in result.trials if t.trial.case_id == "busy"]
    assert [e.kind if e else None for e in errors] == ["infrastructure"] * 2
    assert all(e is not None and "HTTP 429" in e.message for e in errors)
    assert result.totals.infrastructure_errors == 2
    assert (result.totals.rated_trials, result.totals.passed, result.totals.pass_rate) == (
        2,
        2,
        1.0,
    )
    busy_requests = [r for r in server.requests if "busy" in user_texts(r)[-1]]
    assert len(busy_requests) == 2  # one per trial: LiteLLM was told not to retry


async def test_a_refused_key_stops_the_run(server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    server.handler = lambda body: Reply.error(401, "invalid api key")
    agent = LlmAgent(name="assistant", model=model(server, num_retries=0))
    cases = eval_set({"eval_id": "refused", "conversation": [{"user_content": "hi"}]})
    with pytest.raises(ProviderAuthError, match="authentication failed"):
        await run(agent, cases, config(), tmp_path)


# -- several agents --------------------------------------------------------------------


async def test_a_transfer_to_a_sub_agent_is_a_handoff_and_its_steps_are_judged(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.push(
        Reply.tools(("transfer_to_agent", {"agent_name": "weather_agent"})),
        Reply.tools(("get_weather", {"location": "Sydney"})),
        Reply.text("Sydney is windy at 68°F."),
    )
    root = LlmAgent(
        name="root_agent",
        model=model(server),
        instruction="Route weather questions.",
        sub_agents=[weather_agent(server)],
    )
    cases = eval_set(
        {
            "eval_id": "routed",
            "conversation": [
                {
                    "user_content": "Weather in Sydney?",
                    "expected_nodes": ["root_agent", "root_agent/weather_agent"],
                    "expected_tool_trajectory": [
                        {"name": "transfer_to_agent", "args": {"agent_name": "weather_agent"}},
                        {"name": "get_weather", "args": {"location": "Sydney"}},
                    ],
                }
            ],
        }
    )
    cfg = config(
        node_trajectory_avg_score=CriterionConfig(threshold=1.0),
        tool_trajectory_avg_score=CriterionConfig(threshold=1.0),
    )
    result = await run(root, cases, cfg, tmp_path)

    (judged,) = result.trials
    trial = judged.trial
    assert trial.error is None and judged.status == "passed"
    scores = {c.criterion: c.score for c in judged.criteria}
    assert scores == {"node_trajectory_avg_score": 1.0, "tool_trajectory_avg_score": 1.0}
    assert kinds(trial) == [
        ("node", "root_agent"),
        ("model_call", "root_agent"),
        ("tool_call", "root_agent"),
        ("handoff", "root_agent"),
        ("node", "weather_agent"),
        ("model_call", "weather_agent"),
        ("tool_call", "weather_agent"),
        ("model_call", "weather_agent"),
        ("message", None),
    ]
    turn = trial.turns[0]
    assert [(n.name, n.path) for n in turn.nodes] == [
        ("root_agent", []),
        ("weather_agent", ["root_agent"]),
    ]
    (handoff,) = turn.handoffs
    assert isinstance(handoff, HandoffEvent)
    assert (handoff.source, handoff.target) == ("root_agent", "weather_agent")
    transfer = turn.tool_calls[0]
    assert (transfer.name, transfer.result) == ("transfer_to_agent", {"result": None})
    assert turn.final_response == "Sydney is windy at 68°F."

    # a wrong expectation scores what it misses
    wrong = eval_set({**cases.eval_cases[0].model_dump(), "eval_id": "routed_wrong"})
    wrong.eval_cases[0].conversation[0].expected_nodes = ["root_agent", "news_agent"]
    server.push(
        Reply.tools(("transfer_to_agent", {"agent_name": "weather_agent"})),
        Reply.tools(("get_weather", {"location": "Sydney"})),
        Reply.text("Sydney is windy at 68°F."),
    )
    again = await run(
        root,
        wrong,
        config(node_trajectory_avg_score=CriterionConfig(threshold=1.0, match_type="IN_ORDER")),
        tmp_path / "wrong",
    )
    (verdict,) = again.trials[0].criteria
    assert verdict.score == 0.5 and verdict.status == "failed"


async def test_steps_outside_the_node_runtime_and_in_workflows_have_their_paths(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    def first(name: str) -> LlmAgent:
        return LlmAgent(name=name, model=model(server), instruction=f"You are {name}.")

    pipeline = SequentialAgent(name="pipeline", sub_agents=[first("draft"), first("review")])
    server.push(Reply.text("a draft"), Reply.text("a review"))
    cases = eval_set({"eval_id": "steps", "conversation": [{"user_content": "write"}]})
    result = await run(pipeline, cases, config(), tmp_path / "sequential")
    turn = only_trial(result).turns[0]
    assert [(n.name, n.path) for n in turn.nodes] == [
        ("pipeline", []),
        ("draft", ["pipeline"]),
        ("review", ["pipeline"]),
    ]
    assert turn.intermediate_responses == ["a draft"]  # the first agent's final response
    assert turn.final_response == "a review"

    def shout(node_input: str) -> str:
        return str(node_input).upper()

    workflow = Workflow(name="flow", edges=[(START, first("draft"), shout, first("review"))])
    server.push(Reply.text("a draft"), Reply.text("a review"))
    result = await run(workflow, cases, config(), tmp_path / "workflow")
    turn = only_trial(result).turns[0]
    assert [(n.name, n.path) for n in turn.nodes] == [
        ("flow", []),
        ("draft", ["flow"]),
        ("shout", ["flow"]),
        ("review", ["flow"]),
    ]
    assert turn.final_response == "a review"
    assert "A DRAFT" in json.dumps(server.requests[-1]["messages"])  # the node's output


# -- loading ---------------------------------------------------------------------------

AGENT_FILE = """
import os

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm

helper = LlmAgent(
    name="helper",
    model=LiteLlm(model="openai/scripted", api_base=os.environ["ADK_TEST_BASE_URL"],
                  api_key="scripted-key"),
    instruction="Repeat what the user says.",
)
"""

APP_PACKAGE = """
import os

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.lite_llm import LiteLlm
from google.adk.plugins.base_plugin import BasePlugin

MODEL_CALLS = []


class CountingPlugin(BasePlugin):
    async def before_model_callback(self, *, callback_context, llm_request):
        MODEL_CALLS.append(callback_context.agent_name)
        return None


root_agent = LlmAgent(
    name="helper",
    model=LiteLlm(model="openai/scripted", api_base=os.environ["ADK_TEST_BASE_URL"],
                  api_key="scripted-key"),
)
app = App(name="helper_app", root_agent=root_agent, plugins=[CountingPlugin(name="counting")])
"""


async def test_a_file_spec_loads_and_runs_the_agent(
    server: ScriptedOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / f"adk_agent_{uuid.uuid4().hex[:8]}.py"
    path.write_text(textwrap.dedent(AGENT_FILE))
    monkeypatch.setenv("ADK_TEST_BASE_URL", server.url)
    server.handler = echo_handler
    agent = load_agent(f"{path}:helper")
    assert isinstance(agent, adk.AdkAgent) and agent.name == "helper"
    assert agent.model == "openai/scripted"
    cases = eval_set(
        {
            "eval_id": "echo",
            "conversation": [{"user_content": "repeat me", "expected_final_response": "repeat me"}],
        }
    )
    result = await run(agent, cases, config(), tmp_path / "run", runs=2, max_concurrency=2)
    assert result.totals.passed == 2
    assert {t.trial.final_response for t in result.trials} == {"repeat me"}


async def test_a_packages_app_is_found_before_its_root_agent(
    server: ScriptedOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"adk_app_{uuid.uuid4().hex[:8]}"
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text("from . import agent\n")
    (tmp_path / name / "agent.py").write_text(textwrap.dedent(APP_PACKAGE))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("ADK_TEST_BASE_URL", server.url)
    server.handler = echo_handler

    agent = load_agent(name)
    assert isinstance(agent, adk.AdkAgent) and isinstance(agent.target, App)
    assert agent.name == "helper_app"  # ADK's name for it, not the attribute's
    cases = eval_set({"eval_id": "app", "conversation": [{"user_content": "hi"}]})
    result = await run(agent, cases, config(), tmp_path / "run")
    assert only_trial(result).final_response == "hi"
    assert sys.modules[f"{name}.agent"].MODEL_CALLS == ["helper"]  # the App's plugin ran
    root_only = load_agent(f"{name}.agent:root_agent")
    assert isinstance(root_only, adk.AdkAgent) and isinstance(root_only.target, LlmAgent)


def test_other_adk_objects_are_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    path.write_text(
        "from google.adk.tools import FunctionTool\n"
        "def ping() -> str:\n    return 'pong'\n"
        "tool = FunctionTool(ping)\n"
    )
    with pytest.raises(AgentLoadError, match="adk adapter cannot evaluate it: a FunctionTool"):
        load_agent(f"{path}:tool")


def test_with_model_switches_every_agent_that_names_a_model(
    server: ScriptedOpenAIServer,
) -> None:
    inherits = LlmAgent(name="inherits", instruction="Uses its parent's model.")
    root = LlmAgent(
        name="root_agent", model=model(server), sub_agents=[weather_agent(server), inherits]
    )
    original = adk.wrap(App(name="weather_app", root_agent=root), name="app")
    switched = original.with_model("openai/gpt-4o-mini")

    assert switched.model == "openai/gpt-4o-mini" and original.model == "openai/scripted"
    assert isinstance(switched.target, App) and switched.target.name == "weather_app"
    new_root = switched.target.root_agent
    assert isinstance(new_root, LlmAgent) and new_root is not root
    models = {a.name: a.model for a in (new_root, *new_root.sub_agents)}
    assert models["root_agent"].model == models["weather_agent"].model == "openai/gpt-4o-mini"
    assert models["inherits"] == ""  # still its parent's
    assert all(sub.parent_agent is new_root for sub in new_root.sub_agents)
    assert root.model.model == "openai/scripted"  # the original tree is untouched
    assert root.sub_agents[0].parent_agent is root

    caller = LlmAgent(name="caller", model=model(server), tools=[AgentTool(weather_agent(server))])
    with pytest.raises(InputError, match="'caller': it calls other agents as tools"):
        adk.wrap(caller, name="caller").with_model("openai/gpt-4o-mini")
    workflow = Workflow(name="flow", edges=[(START, weather_agent(server))])
    with pytest.raises(InputError, match="cannot switch the model of the ADK workflow 'flow'"):
        adk.wrap(workflow, name="flow").with_model("openai/gpt-4o-mini")


# -- the example -----------------------------------------------------------------------


async def test_the_example_agent_runs_with_the_weather_eval_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentflow_eval.demo import install

    install()  # as the front doors do
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("AGENTFLOW_EXAMPLE_MODEL", raising=False)
    agent = load_agent("examples.adk_weather")
    assert isinstance(agent, adk.AdkAgent) and agent.model == "agentflow-demo/weather"
    assert agent.name == "weather_agent"
    loaded = load_evalset(REPO / "examples" / "weather" / "weather.evalset.json")
    cfg = load_config(REPO / "examples" / "weather" / "eval_config.json")
    result = await evaluate(agent, loaded.eval_set, cfg, runs=2, output_dir=tmp_path)

    assert result.simulated and result.agent_model == "agentflow-demo/weather"
    assert result.agent == "weather_agent"
    assert result.totals.trials == 4 and result.totals.errored == 0
    calls = {t.trial.case_id: [(c.name, c.args) for c in t.trial.tool_calls] for t in result.trials}
    assert calls == {
        "weather_lookup_simple": [("get_weather", {"location": "New York"})],
        "weather_lookup_multi_city": [
            ("get_weather", {"location": "Tokyo"}),
            ("get_weather", {"location": "London"}),
        ],
    }
    for judged in result.trials:
        trajectory = next(c for c in judged.criteria if c.criterion == "tool_trajectory_avg_score")
        assert trajectory.score == 1.0
        assert all(call.result and "temperature" in call.result for call in judged.trial.tool_calls)


# -- ADK's own evaluator ---------------------------------------------------------------

ADK_SCORES = json.loads((ADK213 / "evaluator_scores.json").read_text())


@pytest.mark.parametrize("label", sorted(ADK_SCORES["configs"]))
async def test_scores_match_adk_213s_own_evaluator_case_by_case(
    label: str, server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    expected = ADK_SCORES["configs"][label]
    server.handler = equality.handler
    agent = adk.wrap(equality.build_root_agent(server.url), name="root_agent")
    loaded = load_evalset(ADK213 / "equality" / "equality.evalset.json")
    cfg = load_config(ADK213 / "equality" / expected["config_file"])
    result = await evaluate(
        agent,
        loaded.eval_set,
        cfg,
        runs=ADK_SCORES["num_runs"],
        max_concurrency=4,
        output_dir=tmp_path,
    )

    assert result.totals.errored == 0
    ours = {
        (case.case_id, c.criterion): c.mean_score for case in result.cases for c in case.criteria
    }
    adks = {
        (case_id, metric): value["value"]
        for case_id, metrics in expected["cases"].items()
        for metric, value in metrics.items()
    }
    assert ours == pytest.approx(adks, abs=1e-9)


# -- tool mocks ------------------------------------------------------------------------

REAL_CALLS: list[str] = []


def book_flight(destination: str) -> dict[str, Any]:
    """Book a flight (a side effect no nightly run may have).

    Args:
        destination: Where to fly.
    """
    REAL_CALLS.append(destination)
    return {"booked": destination}


async def test_mocked_tools_answer_in_adks_hook_and_the_tool_never_runs(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    REAL_CALLS.clear()
    server.push(
        Reply.tools(("book_flight", {"destination": "Oslo"})),
        Reply.tools(("book_flight", {"destination": "Rome"})),
        Reply.tools(("get_weather", {"location": "Rome"})),
        Reply.text("Booked Oslo; Rome failed."),
    )
    agent = LlmAgent(name="travel_agent", model=model(server), tools=[book_flight, get_weather])
    cases = eval_set(
        {
            "eval_id": "book",
            "conversation": [{"user_content": "Book Oslo and Rome."}],
            "tool_mocks": [
                {"tool": "book_flight", "args": {"destination": "Oslo"}, "result": {"ref": "X1"}},
                {"tool": "book_flight", "error": "no seats left"},
            ],
        }
    )
    result = await run(agent, cases, config(), tmp_path)

    trial = only_trial(result)
    assert trial.error is None
    oslo, rome, weather = trial.turns[0].tool_calls
    assert (oslo.served_by, oslo.result, oslo.error) == ("mock", {"ref": "X1"}, None)
    assert (rome.served_by, rome.result, rome.error) == ("mock", None, "no seats left")
    assert weather.served_by == "tool" and weather.result == get_weather("Rome")
    assert REAL_CALLS == []  # the mocked tool's own code never ran
    # what the model was told: the mock's result, then the failure as ADK reports one
    responses = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert json.loads(responses[0]) == {"ref": "X1"}
    assert json.loads(responses[1]) == {"error": "no seats left"}


async def test_an_injected_fault_and_the_unmocked_policy_reach_adk_tools(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    REAL_CALLS.clear()
    server.push(
        Reply.tools(("get_weather", {"location": "Oslo"})),
        Reply.tools(("book_flight", {"destination": "Oslo"})),
        Reply.text("Sorry."),
    )
    agent = LlmAgent(name="travel_agent", model=model(server), tools=[book_flight, get_weather])
    cases = eval_set(
        {
            "eval_id": "faults",
            "conversation": [{"user_content": "Weather in Oslo, then book it."}],
            "tool_mocks": [
                {
                    "tool": "get_weather",
                    "result": {"condition": "sunny"},
                    "fault": {"kind": "timeout", "probability": 1.0},
                }
            ],
        }
    )
    cfg = config()
    cfg = cfg.model_copy(update={"unmocked_tools": "fail"})
    result = await run(agent, cases, cfg, tmp_path)

    weather, booking = only_trial(result).turns[0].tool_calls
    assert (weather.served_by, weather.error) == ("fault", "get_weather timed out (injected fault)")
    assert booking.served_by == "policy" and "has no mock" in (booking.error or "")
    assert REAL_CALLS == []


async def test_a_seeded_history_is_refused_for_adk_agents(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    agent = weather_agent(server)
    cases = eval_set(
        {
            "eval_id": "next",
            "history": [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello"},
            ],
            "conversation": [{"user_content": "Oslo?"}],
        }
    )
    with pytest.raises(InputError, match=r"cannot start from a seeded history"):
        await run(agent, cases, config(), tmp_path)
    assert server.request_count == 0


# -- a case from an ADK session, run again --------------------------------------------


async def test_a_case_added_from_an_adk_session_passes_against_the_agent_that_made_it(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    """The session file as ADK's session services save it becomes a case (eval-set add),
    and the same agent, run again on it through the adapter, passes it."""
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    from agentflow_eval.files.authoring import add_case, case_from_conversation, create_evalset
    from agentflow_eval.files.sessions import read_session

    def weather(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply.text("It is sunny in Paris.")
        return Reply.tools(("get_weather", {"location": "Paris"}))

    server.handler = weather
    agent = weather_agent(server)
    sessions = InMemorySessionService()
    runner = Runner(agent=agent, app_name="weather", session_service=sessions)
    session = await sessions.create_session(app_name="weather", user_id="u1", state={"units": "F"})
    message = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])
    async for _ in runner.run_async(user_id="u1", session_id=session.id, new_message=message):
        pass
    saved = await sessions.get_session(app_name="weather", user_id="u1", session_id=session.id)
    assert saved is not None
    session_file = tmp_path / "session.json"
    session_file.write_text(saved.model_dump_json(by_alias=True), encoding="utf-8")

    evalset_file = tmp_path / "from_sessions.evalset.json"
    create_evalset(evalset_file)
    case = case_from_conversation(read_session(str(session_file)), "paris")
    add_case(evalset_file, case)
    (added,) = load_evalset(evalset_file).eval_set.eval_cases
    (turn,) = added.conversation
    assert [(c.name, c.args) for c in turn.expected_tool_trajectory] == [
        ("get_weather", {"location": "Paris"})
    ]
    assert added.session_input is not None and added.session_input.state == {"units": "F"}

    cfg = config(
        tool_trajectory_avg_score=CriterionConfig(threshold=1.0),
        response_match_score=CriterionConfig(threshold=0.9),
    )
    result = await run(agent, load_evalset(evalset_file).eval_set, cfg, tmp_path / "run", runs=2)
    assert [r.status for r in result.trials] == ["passed", "passed"]


async def test_a_transfer_is_not_a_tool_the_fail_policy_stops(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    """With unmocked tools failing, ADK's routing to a sub-agent still happens (it is not
    a user's tool), and the sub-agent's mocked tool answers."""
    server.push(
        Reply.tools(("transfer_to_agent", {"agent_name": "weather_agent"})),
        Reply.tools(("get_weather", {"location": "Sydney"})),
        Reply.text("Sydney is calm."),
    )
    root = LlmAgent(
        name="root_agent",
        model=model(server),
        instruction="Route weather questions.",
        sub_agents=[weather_agent(server)],
    )
    cases = eval_set(
        {
            "eval_id": "routed",
            "conversation": [{"user_content": "Weather in Sydney?", "expected_nodes": []}],
            "expectations": ["completes"],
            "tool_mocks": [{"tool": "get_weather", "result": {"condition": "calm"}}],
        }
    )
    cfg = config().model_copy(update={"unmocked_tools": "fail"})
    result = await run(root, cases, cfg, tmp_path)
    (judged,) = result.trials
    assert judged.trial.error is None
    transfer, weather = judged.trial.turns[0].tool_calls
    assert (transfer.name, transfer.served_by, transfer.error) == (
        "transfer_to_agent",
        "tool",
        None,
    )
    assert (weather.served_by, weather.result) == ("mock", {"condition": "calm"})
    assert judged.trial.turns[0].final_response == "Sydney is calm."
