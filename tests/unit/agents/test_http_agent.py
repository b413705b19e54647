"""HttpAgent against real local HTTP servers: the OpenAI shape and the simple shape."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agentflow_eval.agents.base import SessionContext, TrajectoryRecorder
from agentflow_eval.agents.http import HttpAgent, HttpAgentError
from agentflow_eval.models.evalset import Message
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

MakeContext = Callable[..., SessionContext]


@pytest.fixture(scope="module")
def openai_server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as srv:
        yield srv


@pytest.fixture
def chat(openai_server: ScriptedOpenAIServer) -> ScriptedOpenAIServer:
    openai_server.requests.clear()
    return openai_server


def chat_url(server: ScriptedOpenAIServer) -> str:
    return f"{server.url}/chat/completions"


async def test_openai_shape_sends_history_and_reads_the_answer(
    chat: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    chat.push(Reply.text("Hello!", prompt_tokens=12, completion_tokens=3), Reply.text("Bye!"))
    agent = HttpAgent(chat_url(chat), model="my-agent", headers={"X-Team": "evals"})
    session = await agent.start_session(make_context())
    recorder = TrajectoryRecorder()
    assert await session.respond(Message.of("hi"), recorder) == "Hello!"
    assert await session.respond(Message.of("bye"), TrajectoryRecorder()) == "Bye!"
    await session.aclose()

    first, second = chat.requests
    assert first == {"model": "my-agent", "messages": [{"role": "user", "content": "hi"}]}
    assert second["messages"] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "bye"},
    ]
    usage = recorder.usage_total
    assert (usage.prompt_tokens, usage.completion_tokens, usage.calls) == (12, 3, 1)


async def test_openai_shape_records_reported_tool_calls(
    chat: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    chat.push(
        Reply(
            content="Tokyo is sunny.",
            tool_calls=[{"name": "get_weather", "arguments": {"location": "Tokyo"}}],
        )
    )
    session = await HttpAgent(chat_url(chat)).start_session(make_context())
    recorder = TrajectoryRecorder()
    assert await session.respond(Message.of("Tokyo?"), recorder) == "Tokyo is sunny."
    [call] = recorder.tool_calls
    assert (call.name, call.args) == ("get_weather", {"location": "Tokyo"})
    assert call.id is not None and call.id.startswith("call_")
    assert "model" not in chat.requests[0]
    await session.aclose()


async def test_openai_shape_reads_agentflow_tool_calls(
    chat: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    body = {
        "choices": [{"message": {"role": "assistant", "content": "Done."}}],
        "agentflow_tool_calls": [
            {"name": "search", "args": {"q": "x"}, "result": ["a", "b"]},
            {"name": "fetch", "args": {"url": "u"}, "error": "404"},
        ],
    }
    chat.push(Reply(raw_body=json.dumps(body)))
    session = await HttpAgent(chat_url(chat)).start_session(make_context())
    recorder = TrajectoryRecorder()
    assert await session.respond(Message.of("go"), recorder) == "Done."
    assert [(c.name, c.args, c.result, c.error) for c in recorder.tool_calls] == [
        ("search", {"q": "x"}, ["a", "b"], None),
        ("fetch", {"url": "u"}, None, "404"),
    ]
    assert recorder.usage_total.calls == 0  # no usage reported, none invented
    await session.aclose()


async def test_an_error_status_raises_with_status_and_body(
    chat: ScriptedOpenAIServer, make_context: MakeContext
) -> None:
    chat.push(Reply.error(503, "agent is overloaded"))
    session = await HttpAgent(chat_url(chat)).start_session(make_context())
    with pytest.raises(HttpAgentError, match="answered 503") as info:
        await session.respond(Message.of("hi"), TrajectoryRecorder())
    assert "agent is overloaded" in str(info.value)
    await session.aclose()


@pytest.mark.parametrize(
    ("raw", "problem"),
    [("<html>oops</html>", "not JSON"), (json.dumps({"choices": []}), "unexpected body")],
)
async def test_an_unreadable_body_raises(
    chat: ScriptedOpenAIServer, make_context: MakeContext, raw: str, problem: str
) -> None:
    chat.push(Reply(raw_body=raw))
    session = await HttpAgent(chat_url(chat)).start_session(make_context())
    with pytest.raises(HttpAgentError, match=problem):
        await session.respond(Message.of("hi"), TrajectoryRecorder())
    await session.aclose()


class SimpleAgentServer:
    """A tiny simple-shape agent: counts turns in its state and reports one tool call."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append(body)
                turns = body["state"].get("turns", 0) + 1
                reply = {
                    "response": f"turn {turns}: {body['message']}",
                    "tool_calls": [{"name": "lookup", "args": {"q": body["message"]}}],
                    "state": {**body["state"], "turns": turns},
                    "usage": {"prompt_tokens": 4, "completion_tokens": 2},
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/agent"


@pytest.fixture
def simple_server() -> Iterator[SimpleAgentServer]:
    srv = SimpleAgentServer()
    srv.thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


async def test_simple_shape_round_trip_with_state(
    simple_server: SimpleAgentServer, make_context: MakeContext
) -> None:
    ctx = make_context(state={"user": "ada"})
    session = await HttpAgent(simple_server.url, shape="simple").start_session(ctx)
    recorder = TrajectoryRecorder()
    assert await session.respond(Message.of("hello"), recorder) == "turn 1: hello"
    assert await session.respond(Message.of("again"), TrajectoryRecorder()) == "turn 2: again"
    await session.aclose()

    first, second = simple_server.requests
    assert first == {
        "message": "hello",
        "session_id": ctx.session_id,
        "history": [],
        "state": {"user": "ada"},
    }
    assert second["history"] == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "turn 1: hello"},
    ]
    assert second["state"] == {"user": "ada", "turns": 1}
    assert [(c.name, c.args) for c in recorder.tool_calls] == [("lookup", {"q": "hello"})]
    assert (recorder.usage_total.prompt_tokens, recorder.usage_total.completion_tokens) == (4, 2)
    # the state the agent returned last is the session's: the trial records it
    assert session.state == {"user": "ada", "turns": 2}


async def test_an_openai_shaped_session_reports_no_state(make_context: MakeContext) -> None:
    session = await HttpAgent("http://127.0.0.1:1/v1/chat/completions").start_session(
        make_context(state={"user": "ada"})
    )
    assert session.state is None
    await session.aclose()


async def test_each_session_has_its_own_client_closed_by_aclose(
    make_context: MakeContext,
) -> None:
    agent = HttpAgent("http://127.0.0.1:9/unused")
    one = await agent.start_session(make_context(trial_index=0))
    two = await agent.start_session(make_context(trial_index=1))
    assert one.client is not two.client  # type: ignore[attr-defined]
    await one.aclose()
    assert one.client.is_closed  # type: ignore[attr-defined]
    assert not two.client.is_closed  # type: ignore[attr-defined]
    await two.aclose()


def test_bad_settings_are_rejected() -> None:
    with pytest.raises(ValueError, match="expected one of: openai, simple"):
        HttpAgent("http://x", shape="grpc")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must start with http"):
        HttpAgent("ftp://x")
    with pytest.raises(ValueError, match="timeout_s must be positive"):
        HttpAgent("http://x", timeout_s=0)


SEEDED = (
    {"role": "user", "content": "Flights to Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "search", "arguments": '{"to": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "AF123"},
)


async def test_a_seeded_history_opens_each_shapes_conversation(
    chat: ScriptedOpenAIServer, simple_server: SimpleAgentServer, make_context: MakeContext
) -> None:
    ctx = dataclasses.replace(make_context(), history=SEEDED)
    chat.push(Reply.text("Booked."))
    session = await HttpAgent(chat_url(chat)).start_session(ctx)
    await session.respond(Message.of("Book it"), TrajectoryRecorder())
    await session.aclose()
    assert chat.requests[0]["messages"] == [*SEEDED, {"role": "user", "content": "Book it"}]

    session = await HttpAgent(simple_server.url, shape="simple").start_session(ctx)
    await session.respond(Message.of("Book it"), TrajectoryRecorder())
    await session.respond(Message.of("Thanks"), TrajectoryRecorder())
    await session.aclose()
    first, second = simple_server.requests
    assert first["history"] == list(SEEDED)
    assert second["history"] == [
        *SEEDED,
        {"role": "user", "content": "Book it"},
        {"role": "assistant", "content": "turn 1: Book it"},
    ]
    assert ctx.history == SEEDED  # each session works on its own copy
