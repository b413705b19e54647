"""Which transport serves a model call, and the direct OpenAI-compatible client itself,
against the scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from agentflow_eval.llm import client as llm
from agentflow_eval.llm import openai_direct
from agentflow_eval.llm.openai_direct import (
    ChatCompletion,
    ModelConnectionError,
    ModelHTTPError,
    ModelTimeout,
    direct_request,
)
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY", llm.TRANSPORT_ENV):
        monkeypatch.delenv(name, raising=False)


# ---------------------------------------------------------------------------- routing


def call(**kw: Any) -> dict[str, Any]:
    return {"model": "openai/local-llama", "messages": MESSAGES, **kw}


def test_an_unpriced_openai_model_on_a_self_hosted_endpoint_goes_direct() -> None:
    request = direct_request(
        call(api_base="http://10.0.0.5:8000/v1/", api_key="k", temperature=0, seed=3)
    )
    assert request is not None
    assert request.url == "http://10.0.0.5:8000/v1/chat/completions"
    assert request.body == {
        "model": "local-llama",
        "messages": MESSAGES,
        "temperature": 0,
        "seed": 3,
    }
    assert request.headers["Authorization"] == "Bearer k"


def test_the_base_url_and_key_may_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway.internal/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    request = direct_request(call())
    assert request is not None
    assert request.url == "http://gateway.internal/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer from-env"


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        (call(), "no base URL: OpenAI itself"),
        (call(api_base="https://api.openai.com/v1"), "OpenAI's own endpoint"),
        (call(model="openai/gpt-4o-mini", api_base="http://h/v1"), "a priced model"),
        (call(model="anthropic/claude-3-5-haiku", api_base="http://h/v1"), "another provider"),
        (call(model="agentflow-demo/weather"), "the demo model"),
        (call(api_base="http://h/v1", stream=True), "streaming"),
        (call(api_base="http://h/v1", num_retries=2), "transport retries"),
        (call(api_base="http://h/v1", mock_response="x"), "an option it does not know"),
    ],
)
def test_everything_else_goes_through_litellm(kwargs: dict[str, Any], why: str) -> None:
    assert direct_request(kwargs) is None, why


def test_forcing_direct_takes_priced_and_openai_hosted_models() -> None:
    request = direct_request(call(model="openai/gpt-4o-mini"), include_openai=True)
    assert request is not None
    assert request.url == "https://api.openai.com/v1/chat/completions"


def test_a_priced_model_is_recognised_from_the_packaged_price_map() -> None:
    assert openai_direct.has_list_price("gpt-4o-mini")
    assert not openai_direct.has_list_price("my-finetuned-llama")


def test_an_unknown_transport_name_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(llm.TRANSPORT_ENV, "fast")
    with pytest.raises(ValueError, match="AGENTFLOW_LLM_TRANSPORT must be one of"):
        llm.resolve_transport()


async def test_forced_direct_refuses_a_call_it_cannot_make() -> None:
    with pytest.raises(ValueError, match="does not know mock_response"):
        await llm.ModelClient().complete(
            transport="direct", **call(api_base="http://h/v1", mock_response="x")
        )
    with pytest.raises(ValueError, match="openai/<name> models only"):
        await llm.ModelClient().complete(transport="direct", model="anthropic/x", messages=MESSAGES)


# ---------------------------------------------------------------------------- the client


async def test_auto_answers_over_the_direct_client(server: ScriptedOpenAIServer) -> None:
    server.push(
        Reply(
            content="Checking.",
            tool_calls=[{"name": "get_weather", "arguments": {"location": "Oslo"}}],
            prompt_tokens=12,
            completion_tokens=4,
        )
    )
    reply = await llm.ModelClient().complete(**call(api_base=server.url, api_key="secret"))

    assert isinstance(reply, ChatCompletion)
    message = reply.choices[0].message
    assert message.content == "Checking."
    [tool_call] = message.tool_calls or []
    assert tool_call.id.startswith("call_")
    assert (tool_call.function.name, json.loads(tool_call.function.arguments)) == (
        "get_weather",
        {"location": "Oslo"},
    )
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 4)
    assert reply.usage.total_tokens == 16
    assert llm.response_cost(reply, "openai/local-llama") is None
    assert server.requests[-1] == {"model": "local-llama", "messages": MESSAGES}
    assert server.request_headers[-1]["authorization"] == "Bearer secret"


async def test_the_litellm_transport_answers_the_same_call(server: ScriptedOpenAIServer) -> None:
    server.push(Reply.text("hello"))
    reply = await llm.ModelClient().complete(
        transport="litellm", **call(api_base=server.url, api_key="k")
    )
    assert not isinstance(reply, ChatCompletion)
    assert type(reply).__name__ == "ModelResponse"
    assert reply.choices[0].message.content == "hello"


async def test_an_error_status_keeps_its_code_message_and_headers(
    server: ScriptedOpenAIServer,
) -> None:
    server.push(Reply.error(429, "slow down", headers={"Retry-After": "7"}))
    with pytest.raises(ModelHTTPError) as info:
        await llm.ModelClient().complete_once(**call(api_base=server.url))
    assert info.value.status_code == 429
    assert info.value.message == "slow down"
    assert info.value.headers["Retry-After"] == "7"


async def test_a_reply_that_is_not_a_completion_says_so(server: ScriptedOpenAIServer) -> None:
    server.push(Reply(raw_body='{"choices": "nope"}'))
    with pytest.raises(ValueError, match="no 'choices' list"):
        await llm.ModelClient().complete_once(**call(api_base=server.url))


async def test_a_slow_reply_times_out(server: ScriptedOpenAIServer) -> None:
    server.push(Reply.text("late", delay_s=1.0))
    with pytest.raises(ModelTimeout, match=r"within 0\.2 s"):
        await llm.ModelClient().complete_once(**call(api_base=server.url, timeout=0.2))


async def test_a_closed_port_is_a_connection_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ModelConnectionError) as info:
        await llm.ModelClient().complete_once(**call(api_base=f"http://127.0.0.1:{port}/v1"))
    assert isinstance(info.value, ConnectionError)


async def test_calls_of_an_open_model_client_share_one_connection(
    server: ScriptedOpenAIServer,
) -> None:
    server.handler = lambda body: Reply.text("ok")
    before = server.connections
    async with llm.ModelClient() as models:
        for _ in range(4):
            await models.complete(**call(api_base=server.url))
    pooled = server.connections - before
    before = server.connections
    for _ in range(4):
        await llm.ModelClient().complete(**call(api_base=server.url))
    unpooled = server.connections - before
    assert (pooled, unpooled) == (1, 4)
