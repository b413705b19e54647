"""LiteLLMAgent's tool loop through the model client, against a scripted server (on the
default transport; the agent's calls answer and fail alike on both:
tests/unit/llm/test_transport_contract.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.agents.base import (
    AgentSession,
    MaxStepsExceeded,
    SessionContext,
    TrajectoryRecorder,
)
from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.models.evalset import Message
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

MakeContext = Callable[..., SessionContext]

CITIES = {"Tokyo": {"condition": "sunny", "temperature": 75}}


def get_weather(location: str) -> dict[str, Any]:
    """Get the current weather for a city.

    Args:
        location: The city to look up.
    """
    if location not in CITIES:
        raise LookupError(f"no data for {location}")
    return {"location": location, **CITIES[location]}


def make_agent(server: ScriptedOpenAIServer, **kw: Any) -> LiteLLMAgent:
    options: dict[str, Any] = {"tools": [get_weather], "system_prompt": "Be brief."}
    options.update(kw)
    return LiteLLMAgent(
        options.pop("model", "openai/scripted"), api_base=server.url, api_key="test", **options
    )


async def turn(
    agent: LiteLLMAgent, ctx: SessionContext, text: str
) -> tuple[str, TrajectoryRecorder]:
    session = await agent.start_session(ctx)
    assert isinstance(session, AgentSession)
    recorder = TrajectoryRecorder()
    try:
        return await session.respond(Message.of(text), recorder), recorder
    finally:
        await session.aclose()


async def test_a_tool_call_is_run_recorded_and_answered(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    server.push(
        Reply.tools(("get_weather", {"location": "Tokyo"})), Reply.text("Tokyo is sunny, 75°F.")
    )
    answer, recorder = await turn(make_agent(server), make_context(), "Weather in Tokyo?")

    assert answer == "Tokyo is sunny, 75°F."
    [call] = recorder.tool_calls
    assert (call.name, call.args, call.error) == ("get_weather", {"location": "Tokyo"}, None)
    assert call.result == {"location": "Tokyo", "condition": "sunny", "temperature": 75}
    assert call.id and call.duration_ms >= 0
    assert recorder.intermediate_responses == []

    first, second = server.requests
    assert first["model"] == "scripted"
    assert first["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Tokyo?"},
    ]
    [tool] = first["tools"]
    assert tool["type"] == "function"
    assert tool["function"]["name"] == "get_weather"
    assert tool["function"]["description"] == "Get the current weather for a city."
    assert tool["function"]["parameters"]["properties"]["location"] == {
        "type": "string",
        "description": "The city to look up.",
    }
    assistant, tool_message = second["messages"][2:]
    assert assistant["tool_calls"][0]["id"] == call.id
    assert assistant["tool_calls"][0]["function"]["name"] == "get_weather"
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == call.id
    assert json.loads(tool_message["content"]) == call.result


async def test_text_beside_tool_calls_is_an_intermediate_response(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    server.push(
        Reply(
            content="Let me check.",
            tool_calls=[{"name": "get_weather", "arguments": {"location": "Tokyo"}}],
        ),
        Reply.text("Sunny."),
    )
    answer, recorder = await turn(make_agent(server), make_context(), "Tokyo?")
    assert answer == "Sunny."
    assert recorder.intermediate_responses == ["Let me check."]


async def test_usage_is_recorded_for_every_model_call(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    server.push(
        Reply.tools(("get_weather", {"location": "Tokyo"}), prompt_tokens=100, completion_tokens=7),
        Reply.text("Sunny.", prompt_tokens=130, completion_tokens=3),
    )
    _, recorder = await turn(make_agent(server), make_context(), "Tokyo?")
    usage = recorder.usage_total
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (230, 10, 240)
    assert usage.calls == 2
    # 'scripted' has no price: its cost is unknown, not $0
    assert (usage.unpriced_calls, usage.known_cost_usd) == (2, None)


async def test_cost_comes_from_litellm_prices_when_the_model_has_one(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    server.push(Reply.text("hi", prompt_tokens=1000, completion_tokens=2000))
    _, recorder = await turn(make_agent(server, model="openai/gpt-4o-mini"), make_context(), "hi")
    # LiteLLM's list price for gpt-4o-mini: $0.15 per million tokens in, $0.60 out
    assert recorder.usage_total.known_cost_usd == pytest.approx(1000 * 0.15e-6 + 2000 * 0.6e-6)
    assert recorder.usage_total.unpriced_calls == 0


async def test_an_exhausted_step_budget_raises_and_keeps_the_calls_made(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    server.handler = lambda body: Reply.tools(("get_weather", {"location": "Tokyo"}))
    session = await make_agent(server, max_steps=3).start_session(make_context())
    recorder = TrajectoryRecorder()
    with pytest.raises(MaxStepsExceeded) as info:
        await session.respond(Message.of("loop forever"), recorder)
    assert info.value.max_steps == 3
    assert server.request_count == 3
    assert [c.name for c in recorder.tool_calls] == ["get_weather"] * 3
    assert recorder.usage_total.calls == 3


async def test_an_unknown_tool_is_an_error_the_model_sees(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    server.push(Reply.tools(("get_forecast", {"location": "Tokyo"})), Reply.text("Sorry."))
    answer, recorder = await turn(make_agent(server), make_context(), "Forecast?")
    assert answer == "Sorry."
    [call] = recorder.tool_calls
    assert call.name == "get_forecast"
    assert call.args == {"location": "Tokyo"}
    assert call.error == "unknown tool 'get_forecast'; available tools: get_weather"
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["content"] == f"Error: {call.error}"


async def test_arguments_that_are_not_json_are_an_error_the_model_sees(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    server.push(
        Reply(tool_calls=[{"name": "get_weather", "arguments": '{"location": Tokyo'}]),
        Reply.text("Oops."),
    )
    answer, recorder = await turn(make_agent(server), make_context(), "Tokyo?")
    assert answer == "Oops."
    [call] = recorder.tool_calls
    assert call.args == {}
    assert call.error is not None
    assert call.error.startswith("arguments are not valid JSON")
    assert '{"location": Tokyo' in call.error
    assert server.requests[1]["messages"][-1]["content"] == f"Error: {call.error}"


async def test_invalid_arguments_and_failing_tools_are_errors_the_model_sees(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    server.push(
        Reply.tools(("get_weather", {"city": "Tokyo"}), ("get_weather", {"location": "Atlantis"})),
        Reply.text("Could not check."),
    )
    answer, recorder = await turn(make_agent(server), make_context(), "Weather?")
    assert answer == "Could not check."
    invalid, failing = recorder.tool_calls
    assert invalid.error is not None and "location: Field required" in invalid.error
    assert failing.error == "LookupError: no data for Atlantis"
    messages = server.requests[1]["messages"]
    assert messages[-2]["content"].startswith("Error: ToolArgumentsError: invalid arguments")
    assert messages[-1]["content"] == "Error: LookupError: no data for Atlantis"


async def test_transient_model_failures_are_retried_by_the_runs_client(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    server.push(Reply.error(500, "upstream down", headers={"retry-after-ms": "1"}))
    server.handler = lambda body: Reply.text("the retry succeeded")
    session = await make_agent(server).start_session(make_context())
    answer = await session.respond(Message.of("hi"), TrajectoryRecorder())
    assert answer == "the retry succeeded"
    assert server.request_count == 2


async def test_a_rejected_request_surfaces_without_retries(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    server.push(Reply.error(400, "bad tool schema"))
    server.handler = lambda body: Reply.text("a retry would have succeeded")
    session = await make_agent(server).start_session(make_context())
    with pytest.raises(Exception, match="bad tool schema"):
        await session.respond(Message.of("hi"), TrajectoryRecorder())
    assert server.request_count == 1


async def test_history_persists_across_turns(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    server.push(
        Reply.tools(("get_weather", {"location": "Tokyo"})),
        Reply.text("Sunny in Tokyo."),
        Reply.text("Same as before."),
    )
    session = await make_agent(server).start_session(make_context())
    await session.respond(Message.of("Tokyo?"), TrajectoryRecorder())
    recorder = TrajectoryRecorder()
    assert await session.respond(Message.of("And now?"), recorder) == "Same as before."
    assert recorder.tool_calls == []
    roles = [m["role"] for m in server.requests[2]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert server.requests[2]["messages"][4]["content"] == "Sunny in Tokyo."
    assert server.requests[2]["messages"][5]["content"] == "And now?"


async def test_tools_get_the_workdir_and_the_session_state(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    def remember(note: str, workdir: Path, state: dict[str, Any], session: SessionContext) -> str:
        state["notes"].append(note)
        (workdir / "notes.txt").write_text("\n".join(state["notes"]))
        return f"{session.case_id}: {len(state['notes'])} notes for {state['user']}"

    server.push(
        Reply.tools(("remember", {"note": "milk"})),
        Reply.text("ok"),
        Reply.tools(("remember", {"note": "eggs"})),
        Reply.text("ok"),
    )
    ctx = make_context(state={"user": "ada", "notes": []})
    session = await make_agent(server, tools=[remember]).start_session(ctx)
    await session.respond(Message.of("milk"), TrajectoryRecorder())
    recorder = TrajectoryRecorder()
    await session.respond(Message.of("eggs"), recorder)
    assert recorder.tool_calls[0].result == "case: 2 notes for ada"
    assert (ctx.workdir / "notes.txt").read_text() == "milk\neggs"
    assert ctx.session_input.state["notes"] == []  # the case's own state is untouched
    schema = server.requests[0]["tools"][0]["function"]["parameters"]
    assert list(schema["properties"]) == ["note"]


async def test_options_reach_the_request(
    server: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    server.push(Reply.text("hi"))
    agent = make_agent(
        server, tools=[], system_prompt="", temperature=0.2, completion_kwargs={"seed": 7}
    )
    await turn(agent, make_context(), "hi")
    [body] = server.requests
    assert body["temperature"] == 0.2
    assert body["seed"] == 7
    assert "tools" not in body
    assert body["messages"] == [{"role": "user", "content": "hi"}]


def test_with_model_returns_a_copy_on_another_model(server: ScriptedOpenAIServer) -> None:
    agent = make_agent(server, name="weather", max_steps=4)
    other = agent.with_model("openai/other", temperature=0.0)
    assert other is not agent
    assert (other.model, other.name, other.max_steps) == ("openai/other", "weather", 4)
    assert [t.name for t in other.tools] == ["get_weather"]
    assert agent.model == "openai/scripted"
    with pytest.raises(TypeError, match="unknown option"):
        agent.with_model("x/y", colour="red")


def test_construction_errors_are_precise() -> None:
    with pytest.raises(ValueError, match="max_steps must be at least 1, got 0"):
        LiteLLMAgent("openai/x", max_steps=0)
    with pytest.raises(ValueError, match="may not set messages, tools"):
        LiteLLMAgent("openai/x", completion_kwargs={"tools": [], "messages": []})
    with pytest.raises(ValueError, match="two tools are named 'get_weather'"):
        LiteLLMAgent("openai/x", tools=[get_weather, get_weather])
