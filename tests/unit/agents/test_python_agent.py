"""PythonAgent: plain functions as agents, with parameters injected by name."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.agents.base import (
    AgentUnderTest,
    SessionContext,
    TrajectoryRecorder,
    current_session,
)
from agentflow_eval.agents.python import AGENT_PARAMS, PythonAgent
from agentflow_eval.models.evalset import Message

MakeContext = Callable[..., SessionContext]


async def ask(agent: AgentUnderTest, ctx: SessionContext, *texts: str) -> list[str]:
    session = await agent.start_session(ctx)
    try:
        return [await session.respond(Message.of(t), TrajectoryRecorder()) for t in texts]
    finally:
        await session.aclose()


async def test_a_sync_function_runs_in_a_worker_thread_inside_the_trial(
    context: SessionContext,
) -> None:
    seen: dict[str, Any] = {}

    def echo(message: str) -> str:
        seen["thread"] = threading.get_ident()
        seen["session"] = current_session()
        return f"you said {message}"

    agent = PythonAgent(echo)
    assert isinstance(agent, AgentUnderTest)
    assert (
        agent.name == "test_a_sync_function_runs_in_a_worker_thread_inside_the_trial.<locals>.echo"
    )
    assert await ask(agent, context, "hi") == ["you said hi"]
    assert seen["thread"] != threading.get_ident()
    assert seen["session"] is context


async def test_an_async_function_is_awaited(make_context: MakeContext) -> None:
    async def shout(message: str) -> str:
        return message.upper()

    assert await ask(PythonAgent(shout, name="shout"), make_context(), "hi") == ["HI"]


async def test_every_parameter_is_injected_by_name(make_context: MakeContext) -> None:
    seen: dict[str, Any] = {}

    def agent(
        workdir: Path,
        session: SessionContext,
        recorder: TrajectoryRecorder,
        history: list[dict[str, str]],
        state: dict[str, Any],
        message: str,
    ) -> str:
        seen.update(
            workdir=workdir, session=session, recorder=recorder, history=history, state=state
        )
        return message

    ctx = make_context(state={"user": "ada"})
    session = await PythonAgent(agent).start_session(ctx)
    recorder = TrajectoryRecorder()
    assert await session.respond(Message.of("hello"), recorder) == "hello"
    assert seen["workdir"] == ctx.workdir
    assert seen["session"] is ctx
    assert seen["recorder"] is recorder
    assert seen["history"] == []
    assert seen["state"] == {"user": "ada"}


async def test_history_and_state_persist_across_turns_of_one_session_only(
    make_context: MakeContext,
) -> None:
    def counter(message: str, history: list[dict[str, str]], state: dict[str, Any]) -> str:
        state["turns"] = state.get("turns", 0) + 1
        state["seen"].append(message)
        return f"turn {state['turns']} after {len(history)} messages"

    agent = PythonAgent(counter)
    initial: dict[str, Any] = {"seen": []}
    first = await ask(agent, make_context(trial_index=0, state=initial), "a", "b", "c")
    assert first == [
        "turn 1 after 0 messages",
        "turn 2 after 2 messages",
        "turn 3 after 4 messages",
    ]
    # a new session starts again from session_input.state, untouched by the first one
    assert await ask(agent, make_context(trial_index=1, state=initial), "x") == [
        "turn 1 after 0 messages"
    ]
    assert initial == {"seen": []}


async def test_history_holds_the_prior_user_and_assistant_messages(
    make_context: MakeContext,
) -> None:
    histories: list[list[dict[str, str]]] = []

    def agent(message: str, history: list[dict[str, str]]) -> str:
        histories.append([dict(item) for item in history])
        history.append({"role": "user", "content": "tampered"})  # a copy: harmless
        return message[::-1]

    await ask(PythonAgent(agent), make_context(), "abc", "xyz")
    assert histories[1] == [
        {"role": "user", "content": "abc"},
        {"role": "assistant", "content": "cba"},
    ]


async def test_a_dict_reply_records_tool_calls_and_intermediate_responses(
    make_context: MakeContext,
) -> None:
    def agent(message: str) -> dict[str, Any]:
        return {
            "response": "Tokyo is sunny",
            "tool_calls": [
                {"name": "get_weather", "args": {"location": "Tokyo"}, "result": {"t": 75}},
                {"name": "get_time", "arguments": {"tz": "JST"}, "error": "timeout"},
            ],
            "intermediate_responses": ["checking"],
        }

    session = await PythonAgent(agent).start_session(make_context())
    recorder = TrajectoryRecorder()
    assert await session.respond(Message.of("weather?"), recorder) == "Tokyo is sunny"
    assert [(c.name, c.args, c.result, c.error) for c in recorder.tool_calls] == [
        ("get_weather", {"location": "Tokyo"}, {"t": 75}, None),
        ("get_time", {"tz": "JST"}, None, "timeout"),
    ]
    assert recorder.intermediate_responses == ["checking"]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [(None, "got NoneType"), ({"answer": "x"}, "not a valid reply"), (42, "got int")],
)
async def test_a_reply_of_the_wrong_shape_is_an_error(
    make_context: MakeContext, reply: Any, problem: str
) -> None:
    def agent(message: str) -> Any:
        return reply

    session = await PythonAgent(agent, name="bad").start_session(make_context())
    with pytest.raises(TypeError, match=problem) as info:
        await session.respond(Message.of("x"), TrajectoryRecorder())
    assert "agent 'bad'" in str(info.value)


def test_an_unknown_required_parameter_is_rejected_at_construction() -> None:
    def agent(message: str, user_id: str) -> str:
        return message

    with pytest.raises(TypeError) as info:
        PythonAgent(agent)
    assert "'user_id'" in str(info.value)
    for name in AGENT_PARAMS:
        assert name in str(info.value)


async def test_optional_unknown_parameters_and_kwargs(make_context: MakeContext) -> None:
    def with_default(message: str, suffix: str = "!") -> str:
        return message + suffix

    def with_kwargs(**kwargs: Any) -> str:
        return ",".join(sorted(kwargs))

    ctx = make_context()
    assert await ask(PythonAgent(with_default), ctx, "hi") == ["hi!"]
    assert await ask(PythonAgent(with_kwargs), ctx, "hi") == [",".join(sorted(AGENT_PARAMS))]


async def test_an_async_callable_object_is_awaited(make_context: MakeContext) -> None:
    class Bot:
        async def __call__(self, message: str) -> str:
            return f"bot: {message}"

    assert await ask(PythonAgent(Bot(), name="bot"), make_context(), "hi") == ["bot: hi"]


async def test_exceptions_from_the_function_propagate(make_context: MakeContext) -> None:
    def broken(message: str) -> str:
        raise RuntimeError("model unavailable")

    session = await PythonAgent(broken).start_session(make_context())
    with pytest.raises(RuntimeError, match="model unavailable"):
        await session.respond(Message.of("x"), TrajectoryRecorder())
