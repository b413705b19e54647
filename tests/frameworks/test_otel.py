"""Agents instrumented with OpenTelemetry, evaluated as plain agent functions with no
adapter and no recorder calls: each trial's trajectory is read from the GenAI spans its
own turns emitted (agentflow_eval/agents/otel.py)."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from agentflow_eval.agents import otel
from agentflow_eval.agents.base import TrajectoryRecorder
from agentflow_eval.agents.loader import load_agent
from agentflow_eval.agents.otel_sdk import TrialTracerProvider
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import (
    MessageEvent,
    ModelCallEvent,
    NodeEvent,
    RunResult,
    ToolCallEvent,
    TrialResult,
)
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

REPO = Path(__file__).resolve().parents[2]
CITIES = ("Tokyo", "Paris", "London")
WEATHER = {"Tokyo": "sunny", "Paris": "rainy", "London": "cloudy"}


def get_weather(location: str) -> dict[str, Any]:
    """The weather in a city.

    Args:
        location: The city.
    """
    if location not in WEATHER:
        raise RuntimeError(f"weather service down for {location}")
    return {"location": location, "condition": WEATHER[location]}


def weather_model(body: dict[str, Any]) -> Reply:
    """A scripted model: calls get_weather for the city the user names, then answers from
    the tool's result; safe for trials running at once (no shared script)."""
    messages = body["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        report = json.loads(last["content"])
        return Reply.text(f"{report['location']} is {report['condition']}.")
    asked = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    asked = asked if isinstance(asked, str) else json.dumps(asked)
    city = next((c for c in (*CITIES, "Atlantis") if c in asked), None)
    if city is None:
        return Reply.text("Which city?")
    return Reply.tools(("get_weather", {"location": city}))


def weather_case(eval_id: str, *turns: str, nodes: list[str] | None = None) -> dict[str, Any]:
    return {
        "eval_id": eval_id,
        "conversation": [
            {
                "user_content": text,
                "expected_tool_trajectory": [
                    {"name": "get_weather", "args": {"location": c}} for c in CITIES if c in text
                ],
                "expected_nodes": nodes or [],
            }
            for text in turns
        ],
    }


def evalset(*cases: dict[str, Any]) -> EvalSet:
    return EvalSet.model_validate({"eval_set_id": "otel", "eval_cases": list(cases)})


def trajectory_config(*, nodes: bool = False) -> EvalConfig:
    criteria = {"tool_trajectory_avg_score": CriterionConfig(threshold=1.0)}
    if nodes:
        criteria["node_trajectory_avg_score"] = CriterionConfig(threshold=1.0)
    return EvalConfig(criteria=criteria)


def score(result: TrialResult, criterion: str) -> float | None:
    return next(c.score for c in result.criteria if c.criterion == criterion)


def by_case(run: RunResult) -> dict[str, list[TrialResult]]:
    out: dict[str, list[TrialResult]] = {}
    for result in run.trials:
        out.setdefault(result.trial.case_id, []).append(result)
    return out


# -- (1) Pydantic AI with its OpenTelemetry instrumentation, inside an agent function ----


def pydantic_weather_agent(
    url: str, *, tracer_provider: Any = None, tools: list[Any] | None = None
) -> Callable[..., Any]:
    """An agent FUNCTION (not a pydantic_ai.Agent) that runs an instrumented Pydantic AI
    agent: no recorder, no adapter. Its OpenAI client does not retry (429s are final)."""
    pytest.importorskip("pydantic_ai")
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=url, api_key="test", max_retries=0)
    weather = Agent(
        OpenAIChatModel("scripted", provider=OpenAIProvider(openai_client=client)),
        name="weather_agent",
        instructions="Use get_weather for every city.",
        tools=tools or [get_weather],
        capabilities=[
            Instrumentation(settings=InstrumentationSettings(tracer_provider=tracer_provider))
        ],
    )

    async def agent(message: str, history: list[dict[str, str]]) -> str:
        earlier = [
            ModelResponse(parts=[TextPart(item["content"])])
            if item["role"] == "assistant"
            else ModelRequest(parts=[UserPromptPart(item["content"])])
            for item in history
        ]
        result = await weather.run(message, message_history=earlier)
        return result.output

    return agent


async def test_an_instrumented_pydantic_ai_agent_function_is_judged_from_its_spans(
    tmp_path: Path,
) -> None:
    cases = evalset(
        weather_case("tokyo", "What's the weather in Tokyo?", nodes=["weather_agent"]),
        weather_case("paris", "And in Paris?", nodes=["weather_agent"]),
    )
    with ScriptedOpenAIServer(handler=weather_model) as server:
        agent = PythonAgent(pydantic_weather_agent(server.url), name="weather")
        run = await evaluate(
            agent,
            cases,
            trajectory_config(nodes=True),
            runs=3,
            max_concurrency=4,
            output_dir=tmp_path,
        )
    assert run.totals.trials == 6 and run.totals.passed == 6
    for result in run.trials:
        assert score(result, "tool_trajectory_avg_score") == 1.0
        assert score(result, "node_trajectory_avg_score") == 1.0
        (turn,) = result.trial.turns
        city = "Tokyo" if result.trial.case_id == "tokyo" else "Paris"
        kinds = [(type(e).__name__, e.author) for e in turn.events]
        assert kinds == [
            ("NodeEvent", "weather_agent"),
            ("ModelCallEvent", "weather_agent"),
            ("ToolCallEvent", "weather_agent"),
            ("ModelCallEvent", "weather_agent"),
            ("MessageEvent", None),  # the answer, added by the trial
        ]
        (call,) = turn.tool_calls
        assert call.args == {"location": city}
        assert call.result == {"location": city, "condition": WEATHER[city]}
        assert call.error is None and call.id and call.duration_ms > 0
        models = [e for e in turn.events if isinstance(e, ModelCallEvent)]
        assert [(m.model, m.usage.prompt_tokens, m.usage.completion_tokens) for m in models] == [
            ("scripted", 10, 5),
            ("scripted", 10, 5),
        ]
        assert all(m.latency_ms and m.latency_ms > 0 for m in models)
        assert turn.usage.calls == 2 and turn.usage.total_tokens == 30
        assert [e.at_ms for e in turn.events] == sorted(e.at_ms for e in turn.events)
        assert turn.final_response == f"{city} is {WEATHER[city].lower()}."
    assert run.totals.usage.calls == 12 and run.totals.usage.total_tokens == 180


async def test_each_turn_of_a_conversation_gets_its_own_spans(tmp_path: Path) -> None:
    requests: list[dict[str, Any]] = []

    def model(body: dict[str, Any]) -> Reply:
        requests.append(body)
        return weather_model(body)

    cases = evalset(weather_case("two_cities", "Weather in Tokyo?", "And in London?"))
    with ScriptedOpenAIServer(handler=model) as server:
        agent = PythonAgent(pydantic_weather_agent(server.url), name="weather")
        run = await evaluate(agent, cases, trajectory_config(), runs=1, output_dir=tmp_path)
    (result,) = run.trials
    assert score(result, "tool_trajectory_avg_score") == 1.0
    first, second = result.trial.turns
    assert [c.args for c in first.tool_calls] == [{"location": "Tokyo"}]
    assert [c.args for c in second.tool_calls] == [{"location": "London"}]
    assert first.usage.calls == second.usage.calls == 2
    # the second turn's first model request carries the first turn's messages
    third_request = requests[2]["messages"]
    said = [m.get("content") for m in third_request]
    assert "Weather in Tokyo?" in said and "Tokyo is sunny." in said
    assert said[-1] == "And in London?"


async def test_a_tool_that_raises_is_recorded_with_its_error(tmp_path: Path) -> None:
    cases = evalset(weather_case("atlantis", "What's the weather in Atlantis?"))
    with ScriptedOpenAIServer(handler=weather_model) as server:
        agent = PythonAgent(pydantic_weather_agent(server.url), name="weather")
        run = await evaluate(agent, cases, trajectory_config(), runs=1, output_dir=tmp_path)
    (result,) = run.trials
    error = result.trial.error
    assert error is not None and error.kind == "exception" and error.type == "RuntimeError"
    (turn,) = result.trial.turns
    (call,) = turn.tool_calls
    assert call.name == "get_weather" and call.args == {"location": "Atlantis"}
    assert call.error == "RuntimeError: weather service down for Atlantis"
    assert call.result is None
    assert turn.usage.calls == 1  # the model call that asked for the tool
    assert [n.name for n in turn.nodes] == ["weather_agent"]


async def test_a_hung_agent_is_stopped_by_the_trial_timeout_and_keeps_its_spans(
    tmp_path: Path,
) -> None:
    def slow_answer(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply.text("too late", delay_s=30)
        return weather_model(body)

    cases = evalset(weather_case("tokyo", "What's the weather in Tokyo?"))
    with ScriptedOpenAIServer(handler=slow_answer) as server:
        agent = PythonAgent(pydantic_weather_agent(server.url), name="weather")
        started = time.perf_counter()
        run = await evaluate(
            agent,
            cases,
            trajectory_config(),
            runs=1,
            trial_timeout_s=0.5,
            output_dir=tmp_path,
        )
        took = time.perf_counter() - started
    (result,) = run.trials
    assert result.trial.error is not None and result.trial.error.kind == "timeout"
    assert result.trial.duration_ms < 5000  # stopped at the timeout, not at the reply
    assert took < 20
    (turn,) = result.trial.turns
    # what happened before the cut: the agent run, its first model call, the tool call
    assert [c.args for c in turn.tool_calls] == [{"location": "Tokyo"}]
    assert [n.name for n in turn.nodes] == ["weather_agent"]
    assert turn.final_response is None


async def test_rate_limits_past_the_clients_retries_are_infrastructure(tmp_path: Path) -> None:
    cases = evalset(weather_case("tokyo", "What's the weather in Tokyo?"))
    with ScriptedOpenAIServer(handler=lambda body: Reply.error(429, "slow down")) as server:
        agent = PythonAgent(pydantic_weather_agent(server.url), name="weather")
        run = await evaluate(agent, cases, trajectory_config(), runs=2, output_dir=tmp_path)
        assert server.request_count == 2  # max_retries=0: one request per trial
    assert [r.trial.error.kind for r in run.trials if r.trial.error] == ["infrastructure"] * 2
    assert run.totals.infrastructure_errors == 2 and run.totals.rated_trials == 0
    # a model call that failed and reported no usage is not counted as one
    assert all(r.trial.usage.calls == 0 for r in run.trials)


async def test_spans_from_a_provider_the_agent_was_given_are_read_once_installed(
    tmp_path: Path,
) -> None:
    exported = InMemorySpanExporter()
    own = TracerProvider()
    own.add_span_processor(SimpleSpanProcessor(exported))
    assert otel.install(own)
    cases = evalset(weather_case("tokyo", "What's the weather in Tokyo?"))
    with ScriptedOpenAIServer(handler=weather_model) as server:
        agent = PythonAgent(pydantic_weather_agent(server.url, tracer_provider=own))
        run = await evaluate(agent, cases, trajectory_config(), runs=1, output_dir=tmp_path)
    (result,) = run.trials
    assert score(result, "tool_trajectory_avg_score") == 1.0
    assert result.trial.usage.calls == 2
    # the user's own exporter still gets every span
    assert sorted(s.name for s in exported.get_finished_spans()) == [
        "chat scripted",
        "chat scripted",
        "execute_tool get_weather",
        "invoke_agent weather_agent",
    ]


async def test_an_agent_file_spec_loads_and_is_read_from_its_spans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pydantic_ai")
    agent_file = tmp_path / "my_otel_agent.py"
    agent_file.write_text(
        textwrap.dedent(
            """
            import os

            from pydantic_ai import Agent
            from pydantic_ai.capabilities import Instrumentation
            from pydantic_ai.models.instrumented import InstrumentationSettings
            from pydantic_ai.models.openai import OpenAIChatModel
            from pydantic_ai.providers.openai import OpenAIProvider

            def get_weather(location: str) -> str:
                return f"{location}: sunny"

            weather = Agent(
                OpenAIChatModel(
                    "scripted",
                    provider=OpenAIProvider(base_url=os.environ["MY_BASE_URL"], api_key="x"),
                ),
                name="file_agent",
                tools=[get_weather],
                capabilities=[Instrumentation(settings=InstrumentationSettings())],
            )

            async def answer(message: str) -> str:
                return (await weather.run(message)).output
            """
        )
    )
    with ScriptedOpenAIServer(handler=weather_model) as server:
        monkeypatch.setenv("MY_BASE_URL", server.url)
        agent = load_agent(f"{agent_file}:answer")
        assert isinstance(agent, PythonAgent)
        run = await evaluate(
            agent,
            evalset(weather_case("paris", "Weather in Paris?", nodes=["file_agent"])),
            trajectory_config(nodes=True),
            runs=1,
            output_dir=tmp_path / "out",
        )
    (result,) = run.trials
    assert score(result, "tool_trajectory_avg_score") == 1.0
    assert score(result, "node_trajectory_avg_score") == 1.0
    assert result.trial.tool_calls[0].result == "Paris: sunny"


# -- (2) spans written by hand with the OpenTelemetry API ------------------------------

tracer = trace.get_tracer("hand_written_agent")


def hand_instrumented_agent(message: str) -> str:
    """A synchronous agent (run in a worker thread) that writes GenAI spans itself: an
    agent run holding a model call and two tool calls, one of them made from a thread
    that did not copy the context but attached the OpenTelemetry one."""
    city = next(c for c in CITIES if c in message)
    with tracer.start_as_current_span(
        "invoke_agent planner",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"},
    ):
        with tracer.start_as_current_span(
            "chat gpt-4o-mini",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 1000,
                "gen_ai.usage.output_tokens": 100,
            },
        ):
            time.sleep(0.001)
        with tracer.start_as_current_span(
            f"execute_tool get_weather {city}",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": json.dumps({"location": city}),
            },
        ) as span:
            span.set_attribute("gen_ai.tool.call.result", json.dumps(get_weather(city)))
        parent = otel_context.get_current()

        def elsewhere() -> None:
            token = otel_context.attach(parent)
            try:
                with tracer.start_as_current_span(
                    "execute_tool get_time",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "get_time",
                        "gen_ai.tool.call.arguments": "{}",
                    },
                ) as timed:
                    timed.set_attribute("gen_ai.tool.call.result", "noon")
            finally:
                otel_context.detach(token)

        worker = threading.Thread(target=elsewhere)  # no copy of the context
        worker.start()
        worker.join()
    return f"{city} is {WEATHER[city]} at noon."


async def test_a_hand_instrumented_agent_has_its_trajectory_read(tmp_path: Path) -> None:
    case = weather_case("paris", "Weather in Paris?", nodes=["planner"])
    case["conversation"][0]["expected_tool_trajectory"].append({"name": "get_time", "args": {}})
    run = await evaluate(
        PythonAgent(hand_instrumented_agent),
        evalset(case),
        trajectory_config(nodes=True),
        runs=2,
        output_dir=tmp_path,
    )
    for result in run.trials:
        assert score(result, "tool_trajectory_avg_score") == 1.0
        assert score(result, "node_trajectory_avg_score") == 1.0
        (turn,) = result.trial.turns
        weather, timed = turn.tool_calls
        assert weather.args == {"location": "Paris"}
        assert weather.result == {"location": "Paris", "condition": "rainy"}
        assert (timed.name, timed.args, timed.result) == ("get_time", {}, "noon")
        assert {e.author for e in turn.events if not isinstance(e, MessageEvent)} == {"planner"}
        (model,) = [e for e in turn.events if isinstance(e, ModelCallEvent)]
        assert model.model == "gpt-4o-mini"
        assert model.usage.total_tokens == 1100
        assert model.usage.cost_usd > 0  # priced from LiteLLM's list price for the model


def test_opentelemetry_is_not_imported_for_an_agent_that_does_not_use_it() -> None:
    script = textwrap.dedent(
        """
        import asyncio, sys
        from pathlib import Path
        from agentflow_eval.agents.base import SessionContext, TrajectoryRecorder
        from agentflow_eval.agents.python import PythonAgent
        from agentflow_eval.models.evalset import Message, SessionInput

        async def main():
            context = SessionContext("c", 0, "c#0", SessionInput(), Path("unused"))
            session = await PythonAgent(lambda message: "hi").start_session(context)
            for _ in range(3):
                assert await session.respond(Message.of("hello"), TrajectoryRecorder()) == "hi"

        asyncio.run(main())
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# -- (3) trials running at once never see each other's spans ---------------------------


async def test_concurrent_trials_never_see_each_others_spans(tmp_path: Path) -> None:
    async def agent(message: str, session: Any) -> str:
        me = {"trial": session.session_id}
        rng = random.Random(session.session_id)
        with tracer.start_as_current_span(
            "invoke_agent worker",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "worker"},
        ):
            for step in range(3):
                await asyncio.sleep(rng.uniform(0, 0.01))
                with tracer.start_as_current_span(
                    "execute_tool note",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "note",
                        "gen_ai.tool.call.arguments": json.dumps({**me, "step": step}),
                    },
                ):
                    await asyncio.sleep(rng.uniform(0, 0.01))

            def in_a_thread() -> None:  # asyncio.to_thread copies the context
                with tracer.start_as_current_span(
                    "execute_tool note",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "note",
                        "gen_ai.tool.call.arguments": json.dumps({**me, "step": 3}),
                    },
                ):
                    time.sleep(rng.uniform(0, 0.01))

            await asyncio.to_thread(in_a_thread)
        return "done"

    cases = evalset(
        *({"eval_id": f"c{i}", "conversation": [{"user_content": "go"}]} for i in range(4))
    )
    config = EvalConfig(criteria={"tool_trajectory_avg_score": CriterionConfig(threshold=0.0)})
    run = await evaluate(
        PythonAgent(agent),
        cases,
        config,
        runs=5,
        max_concurrency=8,
        output_dir=tmp_path,
    )
    assert len(run.trials) == 20
    for result in run.trials:
        trial = result.trial
        mine = f"{trial.case_id}#{trial.trial_index}"
        calls = trial.tool_calls
        assert [c.args for c in calls] == [{"trial": mine, "step": s} for s in range(4)]
        assert [n.name for n in trial.turns[0].nodes] == ["worker"]


# -- (4) an agent that records through the recorder and emits spans: counted once -------


async def test_what_the_agent_recorded_itself_is_not_taken_again_from_its_spans(
    tmp_path: Path,
) -> None:
    def agent(message: str, recorder: TrajectoryRecorder) -> str:
        with (
            tracer.start_as_current_span(
                "execute_tool get_weather",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "get_weather",
                    "gen_ai.tool.call.arguments": '{"location": "Tokyo"}',
                },
            ),
            recorder.tool("get_weather", {"location": "Tokyo"}) as call,
        ):
            call.result = get_weather("Tokyo")
        with tracer.start_as_current_span(
            "chat small-model",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "small-model",
                "gen_ai.usage.input_tokens": 7,
                "gen_ai.usage.output_tokens": 3,
            },
        ):
            pass
        return "Tokyo is sunny."

    def reporting_agent(message: str) -> dict[str, Any]:  # reports its calls in its reply
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather"},
        ):
            pass
        return {
            "response": "Tokyo is sunny.",
            "tool_calls": [{"name": "get_weather", "args": {"location": "Tokyo"}}],
        }

    cases = evalset(weather_case("tokyo", "What's the weather in Tokyo?"))
    turns = {}
    for fn in (agent, reporting_agent):
        run = await evaluate(
            PythonAgent(fn),
            cases,
            trajectory_config(),
            runs=1,
            output_dir=tmp_path / fn.__name__,
        )
        (result,) = run.trials
        (turns[fn.__name__],) = result.trial.turns
        assert score(result, "tool_trajectory_avg_score") == 1.0
    recorded = turns["agent"]
    # the tool call it recorded, once; the model call it did not record, from its span
    assert [e.kind for e in recorded.events] == ["tool_call", "model_call", "message"]
    assert recorded.tool_calls[0].result == {"location": "Tokyo", "condition": "sunny"}
    assert recorded.usage.total_tokens == 10 and recorded.usage.calls == 1
    assert [e.kind for e in turns["reporting_agent"].events] == ["tool_call", "message"]


# -- unit checks: conversion and routing -----------------------------------------------


def test_openinference_and_openllmetry_spellings_are_read() -> None:
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    local = provider.get_tracer("spellings")
    with local.start_as_current_span(
        "agent", attributes={"openinference.span.kind": "AGENT", "agent.name": "oi_agent"}
    ):
        # an instrumented client under an instrumented framework: one call, not two
        framework_call = local.start_as_current_span(
            "ChatOpenAI",
            attributes={
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o",
                "llm.token_count.prompt": 12,
                "llm.token_count.completion": 4,
            },
        )
        client_call = local.start_as_current_span(
            "openai.chat",
            attributes={
                "llm.request.type": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.prompt_tokens": 12,
                "gen_ai.usage.completion_tokens": 4,
            },
        )
        with framework_call, client_call:
            pass
        with local.start_as_current_span(
            "lookup",
            attributes={
                "openinference.span.kind": "TOOL",
                "tool.name": "lookup",
                "input.value": '{"q": "x"}',
                "output.value": "found",
            },
        ):
            pass
        with local.start_as_current_span(
            "search.tool",
            attributes={
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "search",
                "traceloop.entity.input": '{"args": [], "kwargs": {"query": "y"}}',
                "traceloop.entity.output": '["a", "b"]',
            },
        ) as failing:
            failing.record_exception(ValueError("bad query"))
            failing.set_status(trace.Status(trace.StatusCode.ERROR))
    spans = exported.get_finished_spans()
    start = min(s.start_time for s in spans)
    events = otel.events_from_spans(spans, start_ns=start)
    node, model, lookup, search = events
    assert isinstance(node, NodeEvent) and node.name == "oi_agent" and node.at_ms == 0.0
    assert isinstance(model, ModelCallEvent)
    assert (model.model, model.usage.total_tokens, model.author) == ("gpt-4o", 16, "oi_agent")
    assert isinstance(lookup, ToolCallEvent) and isinstance(search, ToolCallEvent)
    assert (lookup.call.name, lookup.call.args, lookup.call.result) == (
        "lookup",
        {"q": "x"},
        "found",
    )
    assert (search.call.name, search.call.args, search.call.result) == (
        "search",
        {"query": "y"},
        ["a", "b"],
    )
    assert search.call.error == "ValueError: bad query"
    assert lookup.author == search.author == "oi_agent"


def test_recorded_events_keep_their_order_as_span_events_are_merged_in() -> None:
    recorder = TrajectoryRecorder()
    recorder.add(MessageEvent(text="a", at_ms=5.0))
    recorder.add(MessageEvent(text="b", at_ms=10.0))
    recorder.merge([NodeEvent(name="late", at_ms=12.0), NodeEvent(name="early", at_ms=1.0)])
    recorder.merge([NodeEvent(name="between", at_ms=7.0)])
    names = [getattr(e, "text", None) or getattr(e, "name", None) for e in recorder.events]
    assert names == ["early", "a", "between", "b", "late"]


def test_outside_a_turn_the_installed_provider_records_nothing() -> None:
    assert otel.install()  # the global provider: ours, unless something set one before
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TrialTracerProvider) or not provider.only_trials:
        pytest.skip("another test of this process set its own tracer provider first")
    with tracer.start_as_current_span("not in a trial") as span:
        assert not span.is_recording()
        assert not span.get_span_context().is_valid  # as with no provider at all
    recorder = TrajectoryRecorder()
    turn = otel.capture_turn(recorder)
    assert turn is not None
    with tracer.start_as_current_span(
        "execute_tool ping", attributes={"gen_ai.operation.name": "execute_tool"}
    ) as span:
        assert span.is_recording()
    turn.finish()
    assert [call.name for call in recorder.tool_calls] == ["ping"]


# -- the example: examples/otel_weather on the weather eval set -------------------------


async def test_the_otel_weather_example_is_evaluable_with_the_weather_eval_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pydantic_ai")
    from agentflow_eval.criteria.config_files import load_config
    from agentflow_eval.demo import install as install_demo
    from agentflow_eval.files.loading import load_evalset

    monkeypatch.delenv("AGENTFLOW_EXAMPLE_BASE_URL", raising=False)
    monkeypatch.chdir(REPO)  # specs name folders as the CLI's user would, from the checkout
    install_demo()  # the config's judge is the demo judge, as the front doors install it
    agent = load_agent("examples/otel_weather")
    assert isinstance(agent, PythonAgent)
    weather = load_evalset(REPO / "examples/weather/weather.evalset.json").eval_set
    config = load_config(REPO / "examples/weather/eval_config.json")
    run = await evaluate(agent, weather, config, runs=5, output_dir=tmp_path)
    assert run.totals.trials == 10 and run.totals.errored == 0
    trials = by_case(run)
    expected = {
        "weather_lookup_simple": ["New York"],
        "weather_lookup_multi_city": ["Tokyo", "London"],
    }
    for case_id, results in trials.items():
        places = [[c.args["location"] for c in r.trial.tool_calls] for r in results]
        assert expected[case_id] in places  # the demo model calls get_weather for each city
        assert all(set(p) <= set(expected[case_id]) for p in places)
        for result in results:
            (turn,) = result.trial.turns
            assert [n.name for n in turn.nodes] == ["weather_agent"]
            assert turn.usage.calls >= 1 and turn.usage.prompt_tokens > 0
            for call in turn.tool_calls:
                assert call.result["location"] == call.args["location"]
                assert call.result["unit"] == "°F"
            if [c.args["location"] for c in turn.tool_calls] == expected[case_id]:
                assert score(result, "tool_trajectory_avg_score") == 1.0
    assert any(r.passed for r in run.trials)


def test_a_sub_agent_is_a_node_inside_its_parent_and_authors_its_calls() -> None:
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    local = provider.get_tracer("nested")

    def agent_span(name: str) -> Any:
        return local.start_as_current_span(
            f"invoke_agent {name}",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name},
        )

    def tool_span(name: str, arguments: str) -> Any:
        return local.start_as_current_span(
            f"execute_tool {name}",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.arguments": arguments,
            },
        )

    with (
        agent_span("router"),
        tool_span("ask_billing", '{"q": "refund"}'),
        agent_span("billing"),
        tool_span("refund", '{"order": 7}'),
    ):
        pass
    spans = exported.get_finished_spans()
    events = otel.events_from_spans(spans, start_ns=min(s.start_time for s in spans))
    described = [
        (e.kind, getattr(e, "name", None) or e.call.name, getattr(e, "path", None), e.author)
        for e in events
        if isinstance(e, NodeEvent | ToolCallEvent)
    ]
    assert described == [
        ("node", "router", [], "router"),
        ("tool_call", "ask_billing", None, "router"),
        ("node", "billing", ["router"], "billing"),
        ("tool_call", "refund", None, "billing"),
    ]


def test_a_provider_that_takes_no_span_processor_is_refused() -> None:
    assert not otel.install(trace.NoOpTracerProvider())


# -- a case from an OTLP JSON export, run again ----------------------------------------


async def test_a_case_added_from_an_otlp_export_passes_against_the_agent_that_made_it(
    tmp_path: Path,
) -> None:
    """The instrumented agent's spans, exported as OTLP JSON by OpenTelemetry's own
    encoder (what an OTLP/HTTP JSON exporter sends), become a case (eval-set add); the same
    agent, evaluated on it from its spans, passes it."""
    encoder = pytest.importorskip("opentelemetry.exporter.otlp.proto.common.trace_encoder")
    from google.protobuf.json_format import MessageToJson

    from agentflow_eval.files.authoring import add_case, case_from_conversation, create_evalset
    from agentflow_eval.files.loading import load_evalset
    from agentflow_eval.files.sessions import read_session

    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    with ScriptedOpenAIServer(handler=weather_model) as server:
        production = pydantic_weather_agent(server.url, tracer_provider=provider)
        assert await production("What's the weather in Paris?", []) == "Paris is rainy."
        trace_file = tmp_path / "trace.json"
        trace_file.write_text(MessageToJson(encoder.encode_spans(exported.get_finished_spans())))

        evalset_file = tmp_path / "from_traces.evalset.json"
        create_evalset(evalset_file)
        add_case(evalset_file, case_from_conversation(read_session(str(trace_file)), "paris"))
        cases = load_evalset(evalset_file).eval_set
        (turn,) = cases.eval_cases[0].conversation
        assert turn.user_content.text == "What's the weather in Paris?"
        assert [(c.name, c.args) for c in turn.expected_tool_trajectory] == [
            ("get_weather", {"location": "Paris"})
        ]
        assert turn.expected_nodes == ["weather_agent"]

        again = PythonAgent(pydantic_weather_agent(server.url), name="weather")
        config = trajectory_config(nodes=True)
        config.criteria["response_match_score"] = CriterionConfig(threshold=1.0)
        run = await evaluate(again, cases, config, runs=2, output_dir=tmp_path / "run")
    assert [r.status for r in run.trials] == ["passed", "passed"]
