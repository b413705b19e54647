"""The transport contract: the direct OpenAI-compatible client and LiteLLM answer the calls
judges, agents and the simulated user make alike — the same replies (text, tool calls),
usage and cost, the same request on the wire, and the same failures: which are retried
and after how long, which stop at once, what a timeout or an unreadable reply is.

Every test here runs over both transports (``AGENTFLOW_LLM_TRANSPORT``: ``auto``, which
sends the tests' unpriced ``openai/...`` models on the scripted server through the direct
client, and ``litellm``). Because they agree, the tests of the judges, the agents and the
runs use the default transport alone.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow_eval.agents.base import SessionContext, TrajectoryRecorder
from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.criteria.judges.prompt import PromptTemplate
from agentflow_eval.criteria.judges.runtime import (
    JudgeError,
    JudgeOptions,
    JudgeRequest,
    JudgeRuntime,
    parse_json_reply,
)
from agentflow_eval.llm import client as llm
from agentflow_eval.llm.client import ModelClient, response_cost
from agentflow_eval.llm.retry import (
    ProviderAuthError,
    ProviderUnavailable,
    RetryPolicy,
    classify,
    provider_error_in,
)
from agentflow_eval.models.config import CriterionConfig, JudgeSettings
from agentflow_eval.models.evalset import Message, SessionInput
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

MODEL = "openai/local-llama"
MESSAGES = [{"role": "user", "content": "hi"}]
FAST = RetryPolicy(max_retries=3, base_delay_s=0.01, max_delay_s=2.0)
KEY_ENV = "AGENTFLOW_TEST_CONTRACT_KEY"


@pytest.fixture(params=["auto", "litellm"], autouse=True)
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test once per transport."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(llm.TRANSPORT_ENV, request.param)
    monkeypatch.setenv(KEY_ENV, "judge-key")
    return str(request.param)


@pytest.fixture
def models() -> Iterator[ModelClient]:
    yield ModelClient(retry=FAST)


def call(api_base: str, **kw: Any) -> dict[str, Any]:
    """A call as the agent, the simulated user and the judges make theirs: the
    transport's own retries off (``num_retries=0``), the client's in charge."""
    return {
        "model": MODEL,
        "messages": MESSAGES,
        "api_base": api_base,
        "api_key": "k",
        "num_retries": 0,
        **kw,
    }


class Timed:
    """A server handler answering ``replies`` in order, noting when each request came."""

    def __init__(self, *replies: Reply) -> None:
        self._replies = list(replies)
        self._lock = threading.Lock()
        self.times: list[float] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.times.append(time.monotonic())
            return self._replies.pop(0)

    def gaps(self) -> list[float]:
        return [b - a for a, b in zip(self.times, self.times[1:], strict=False)]


# ------------------------------------------------------------------------------ replies


async def test_a_text_reply_with_its_usage_and_no_cost(
    server: ScriptedOpenAIServer, models: ModelClient
) -> None:
    server.push(Reply(content="hello", prompt_tokens=12, completion_tokens=4))
    reply = await models.complete(**call(server.url))
    message = reply.choices[0].message
    assert message.content == "hello" and not message.tool_calls
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 4)
    assert reply.usage.total_tokens == 16
    assert response_cost(reply, MODEL) is None  # a self-hosted model's price is unknown


async def test_tool_calls_come_back_with_ids_names_and_arguments(
    server: ScriptedOpenAIServer, models: ModelClient
) -> None:
    server.push(
        Reply(
            content="Checking.",
            tool_calls=[
                {"name": "get_weather", "arguments": {"location": "Oslo"}},
                {"name": "get_time", "arguments": {"zone": "CET"}},
            ],
        )
    )
    reply = await models.complete(**call(server.url))
    message = reply.choices[0].message
    assert message.content == "Checking."
    calls = message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("get_weather", {"location": "Oslo"}),
        ("get_time", {"zone": "CET"}),
    ]
    assert all(c.id for c in calls) and len({c.id for c in calls}) == 2
    assert reply.choices[0].finish_reason == "tool_calls"


async def test_the_request_on_the_wire(server: ScriptedOpenAIServer, models: ModelClient) -> None:
    """What a judge sends (sampling options, no transport retries) and what an agent sends
    (function tools): the server gets the same body and key either way."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather.",
                "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
            },
        }
    ]
    server.handler = lambda body: Reply.text("ok")
    await models.complete(
        **call(server.url, temperature=0.3, seed=7, max_tokens=99, timeout=5),
        max_retries=0,
        drop_params=True,
    )
    await models.complete(**call(server.url, tools=tools))
    judge, agent = server.requests
    sampling = ("model", "messages", "temperature", "seed", "max_tokens")
    assert {name: judge.get(name) for name in sampling} == {
        "model": "local-llama",
        "messages": MESSAGES,
        "temperature": 0.3,
        "seed": 7,
        "max_tokens": 99,
    }
    assert (agent["model"], agent["messages"], agent["tools"]) == ("local-llama", MESSAGES, tools)
    assert [h["authorization"] for h in server.request_headers[-2:]] == ["Bearer k"] * 2


# ----------------------------------------------------------------------------- failures

ONE_ATTEMPT = {
    # what the server sends: the fault's kind, its status, the wait it asks for
    "429-retry-after": (
        Reply.error(429, "slow down", headers={"Retry-After": "7"}),
        ("transient", 429, 7.0),
    ),
    "429-retry-after-ms": (
        Reply.error(429, "slow down", headers={"retry-after-ms": "300", "Retry-After": "30"}),
        ("transient", 429, 0.3),
    ),
    "408": (Reply.error(408, "request timeout"), ("transient", 408, None)),
    "500": (Reply.error(500, "internal error"), ("transient", 500, None)),
    "502": (Reply.error(502, "bad gateway"), ("transient", 502, None)),
    "503": (Reply.error(503, "overloaded", headers={"Retry-After": "0"}), ("transient", 503, 0.0)),
    "504": (Reply.error(504, "gateway timeout"), ("transient", 504, None)),
    "400": (Reply.error(400, "bad tool schema"), ("rejected", 400, None)),
    "404": (Reply.error(404, "no such model"), ("rejected", 404, None)),
    "422": (Reply.error(422, "unprocessable"), ("rejected", 422, None)),
}


@pytest.mark.parametrize("name", ONE_ATTEMPT)
async def test_a_failed_attempt_is_classified_alike(
    server: ScriptedOpenAIServer, models: ModelClient, name: str
) -> None:
    """One attempt (what the judge runtime makes, retrying itself): the transport's own
    error, read the same way — kind, status, the wait the server asked for — and the
    provider's message kept."""
    reply, expected = ONE_ATTEMPT[name]
    server.push(reply)
    with pytest.raises(Exception) as failed:
        await models.complete_once(**call(server.url))
    fault = classify(failed.value)
    assert (fault.kind, fault.status, fault.retry_after_s) == expected
    assert json.loads(reply.raw_body or "")["error"]["message"] in str(failed.value)


@pytest.mark.parametrize(
    "body", ["<html>502 Bad Gateway</html>", '{"choices": "nope"}'], ids=["html", "no-choices"]
)
async def test_a_reply_that_is_not_a_completion_is_a_transient_fault(
    server: ScriptedOpenAIServer, models: ModelClient, body: str
) -> None:
    server.push(Reply(raw_body=body))
    with pytest.raises(Exception) as failed:
        await models.complete_once(**call(server.url))
    assert classify(failed.value).kind == "transient"
    server.push(Reply(raw_body=body), Reply.text("ok"))
    reply = await models.complete(**call(server.url))
    assert reply.choices[0].message.content == "ok"


async def test_a_slow_reply_is_a_timeout_and_retried(
    server: ScriptedOpenAIServer, models: ModelClient
) -> None:
    server.push(Reply.text("late", delay_s=1.0))
    with pytest.raises(Exception) as failed:
        await models.complete_once(**call(server.url, timeout=0.2))
    assert classify(failed.value).kind == "transient"
    server.push(Reply.text("late", delay_s=1.0), Reply.text("in time"))
    reply = await models.complete(**call(server.url, timeout=0.2))
    assert reply.choices[0].message.content == "in time"
    assert models.stats.retries == 1


async def test_a_closed_port_is_a_transient_fault(models: ModelClient) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(Exception) as failed:
        await models.complete_once(**call(f"http://127.0.0.1:{port}/v1"))
    assert classify(failed.value).kind == "transient"


async def test_the_wait_a_server_asks_for_is_kept(
    server: ScriptedOpenAIServer, models: ModelClient
) -> None:
    script = Timed(
        Reply.error(429, "slow down", headers={"Retry-After": "1"}),
        Reply.error(503, headers={"retry-after-ms": "200", "Retry-After": "30"}),
        Reply.text("ok"),
    )
    server.handler = script
    reply = await models.complete(**call(server.url))
    assert reply.choices[0].message.content == "ok"
    first, second = script.gaps()
    # the base backoff is 10 ms: only the headers explain these waits
    assert first >= 0.95  # Retry-After in seconds
    assert 0.18 <= second < 1.0  # retry-after-ms preferred to Retry-After


async def test_faults_that_outlast_the_retries_are_a_provider_failure_wrapped_or_not(
    server: ScriptedOpenAIServer, models: ModelClient
) -> None:
    """Every attempt is one request (no transport retries hidden behind the client's),
    and what is raised is found behind an agent's own exception."""
    server.handler = lambda body: Reply.error(503, "overloaded", headers={"retry-after-ms": "1"})
    with pytest.raises(ProviderUnavailable) as failed:
        await models.complete(**call(server.url))
    assert failed.value.attempts == FAST.max_retries + 1 == server.request_count
    assert "unavailable (HTTP 503)" in str(failed.value)
    try:
        try:
            await models.complete(**call(server.url))
        except Exception as exc:
            raise RuntimeError("my agent failed") from exc
    except RuntimeError as wrapped:
        assert isinstance(provider_error_in(wrapped), ProviderUnavailable)


@pytest.mark.parametrize("status", [401, 403])
async def test_refused_credentials_stop_at_the_first_request(
    server: ScriptedOpenAIServer, models: ModelClient, status: int
) -> None:
    server.handler = lambda body: Reply.error(status, "bad key")
    with pytest.raises(ProviderAuthError, match=rf"authentication failed \(HTTP {status}\)"):
        await models.complete(**call(server.url))
    with pytest.raises(ProviderAuthError, match="refused before"):
        await models.complete(**call(server.url))
    assert server.request_count == 1


async def test_a_rejected_request_is_not_retried(
    server: ScriptedOpenAIServer, models: ModelClient
) -> None:
    server.push(Reply.error(400, "bad tool schema"))
    server.handler = lambda body: Reply.text("a retry would have succeeded")
    with pytest.raises(Exception, match="bad tool schema"):
        await models.complete(**call(server.url))
    assert server.request_count == 1


# ---------------------------------------------------------------------------- consumers


class Verdict(BaseModel):
    verdict: str


TEMPLATE = PromptTemplate(name="t", version="1", source="{{ q }}")


def judge(server: ScriptedOpenAIServer, **settings: Any) -> JudgeRuntime:
    """A judge runtime on ``server`` (its key from the environment, fast backoff)."""
    defaults = {"model": "openai/judge", "api_key_env": KEY_ENV, "retry_base_delay_s": 0.01}
    return JudgeRuntime(JudgeSettings(api_base=server.url, **{**defaults, **settings}))


async def ask(rt: JudgeRuntime, sample: int = 0, **criterion: Any) -> Any:
    """The judge's verdict on one question, with ``criterion`` as its criterion config."""
    options = JudgeOptions.resolve(CriterionConfig(**criterion), rt.settings)
    return await rt.ask(
        JudgeRequest("crit", TEMPLATE, "is it valid?", options, sample),
        lambda content: parse_json_reply(content, Verdict),
    )


async def test_a_judge_verdict_with_its_usage_retries_and_options(
    server: ScriptedOpenAIServer,
) -> None:
    server.push(
        Reply.error(429, headers={"retry-after-ms": "1"}),
        Reply.text("I think it is valid."),  # malformed: asked again, and paid for
        Reply.text(json.dumps({"verdict": "valid"})),
    )
    rt = judge(server, max_retries=3, timeout_s=5.0)
    reply = await ask(rt, sample=1, temperature=0.3, seed=7, max_tokens=99)
    assert reply.value.verdict == "valid" and reply.attempts == 3
    usage = reply.usage
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (3, 20, 10)
    assert usage.cost_usd == 0.0
    assert rt.stats.retries == 2
    body = server.requests[-1]
    assert (body["model"], body["seed"], body["temperature"], body["max_tokens"]) == (
        "judge",
        8,  # sample 1: its seed is 7 + 1
        0.3,
        99,
    )
    assert server.request_headers[-1]["authorization"] == "Bearer judge-key"


async def test_a_judges_every_attempt_is_one_request(server: ScriptedOpenAIServer) -> None:
    """No transport retries hidden behind the judge's own: each counted call is one request."""
    server.handler = lambda _: Reply.error(500)
    rt = judge(server, max_retries=1)
    with pytest.raises(JudgeError):
        await ask(rt)
    assert server.request_count == 2 == rt.stats.calls


async def test_a_judge_stops_at_a_rejected_request(server: ScriptedOpenAIServer) -> None:
    server.push(Reply.error(422, "no such thing"))
    rt = judge(server)
    with pytest.raises(JudgeError, match=r"rejected the request \(HTTP 422\)"):
        await ask(rt)
    assert server.request_count == 1


def get_weather(location: str) -> dict[str, Any]:
    """Get the current weather for a city.

    Args:
        location: The city to look up.
    """
    return {"location": location, "condition": "sunny"}


async def test_an_agents_tool_loop_with_its_usage(
    server: ScriptedOpenAIServer, tmp_path: Any
) -> None:
    server.push(
        Reply.error(500, "upstream down", headers={"retry-after-ms": "1"}),
        Reply.tools(("get_weather", {"location": "Tokyo"}), prompt_tokens=100, completion_tokens=7),
        Reply.text("Tokyo is sunny.", prompt_tokens=130, completion_tokens=3),
    )
    agent = LiteLLMAgent(
        "openai/scripted", api_base=server.url, api_key="test", tools=[get_weather]
    )
    context = SessionContext(
        case_id="case",
        trial_index=0,
        session_id="case-0-session",
        session_input=SessionInput(),
        workdir_path=tmp_path,
        models=ModelClient(retry=FAST),
    )
    session = await agent.start_session(context)
    recorder = TrajectoryRecorder()
    try:
        answer = await session.respond(Message.of("Weather in Tokyo?"), recorder)
    finally:
        await session.aclose()
    assert answer == "Tokyo is sunny."
    [tool_call] = recorder.tool_calls
    assert (tool_call.name, tool_call.args) == ("get_weather", {"location": "Tokyo"})
    assert tool_call.result == {"location": "Tokyo", "condition": "sunny"}
    usage = recorder.usage_total
    assert (usage.prompt_tokens, usage.completion_tokens, usage.calls) == (230, 10, 2)
    assert usage.cost_usd == 0.0
    assistant, tool_message = server.requests[-1]["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == tool_call.id == tool_message["tool_call_id"]
    assert json.loads(tool_message["content"]) == tool_call.result
