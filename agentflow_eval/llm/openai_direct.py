"""A direct client for self-hosted OpenAI-compatible chat-completions endpoints.

vLLM, llama.cpp, Ollama's ``/v1``, LM Studio, TGI, in-house gateways and the tests'
scripted server all speak the OpenAI chat-completions wire format. For them LiteLLM adds
nothing the evaluator uses (there is no price to look up, no format to translate) and its
per-call CPU cost is many times the HTTP call's own (figures in ``benchmarks/RESULTS.md``):
over thousands of calls it dominates a run. This module speaks the format itself over one
pooled aiohttp session.

:func:`direct_request` decides whether a ``litellm.acompletion``-style call can go direct:
an ``openai/<name>`` model that has no list price in LiteLLM's price map (a price means a
hosted model whose cost LiteLLM reports; a self-hosted one has none), a base URL other
than OpenAI's own (explicit ``api_base`` / ``base_url``, else ``OPENAI_BASE_URL`` /
``OPENAI_API_BASE``), and only options this client understands. Anything else returns
``None`` and goes through LiteLLM, so the direct path is a fast lane, never a narrower
one.

The reply is a :class:`ChatCompletion` with the attribute shape of LiteLLM's
``ModelResponse`` that callers read (``choices[0].message.content``, ``.tool_calls[i].id``,
``.function.name`` / ``.arguments``, ``usage.prompt_tokens``), so callers need not know
which path served them. Failures are typed like LiteLLM's where callers look:
:class:`ModelHTTPError` carries ``status_code`` and the response ``headers``
(``Retry-After``), :class:`ModelConnectionError` is a ``ConnectionError``,
:class:`ModelTimeout` a ``TimeoutError``, and a reply that is not a chat completion (not
JSON, whatever its status, or without ``choices``) a
:class:`~agentflow_eval.llm.retry.MalformedReply`. Nothing is retried here: the
:class:`~agentflow_eval.llm.client.ModelClient` retries, the same way for both transports.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from agentflow_eval.llm import litellm_compat
from agentflow_eval.llm.retry import MalformedReply

__all__ = [
    "OPENAI_PREFIX",
    "ChatCompletion",
    "Choice",
    "DirectRequest",
    "FunctionCall",
    "ModelConnectionError",
    "ModelHTTPError",
    "ModelTimeout",
    "ReplyMessage",
    "TokenUsage",
    "ToolCall",
    "chat_completion",
    "direct_request",
    "has_list_price",
    "new_session",
    "parse_completion",
    "refusal",
    "unsupported_options",
]

OPENAI_PREFIX = "openai/"
OPENAI_HOSTS = frozenset({"api.openai.com"})
DEFAULT_TIMEOUT_S = 600.0  # LiteLLM's default request timeout

# Request-body fields of the chat-completions API that are sent as given.
BODY_OPTIONS = frozenset(
    {
        "frequency_penalty",
        "logit_bias",
        "logprobs",
        "max_completion_tokens",
        "max_tokens",
        "n",
        "parallel_tool_calls",
        "presence_penalty",
        "response_format",
        "seed",
        "stop",
        "temperature",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "user",
    }
)
# LiteLLM-level options with a meaning here (or none worth honouring on this path).
TRANSPORT_OPTIONS = frozenset(
    {
        "api_base",
        "api_key",
        "base_url",
        "drop_params",  # nothing to drop: only the fields above are ever sent
        "extra_body",
        "extra_headers",
        "max_retries",
        "messages",
        "model",
        "num_retries",
        "timeout",
        litellm_compat.SKIP_MCP_OPTION,  # LiteLLM's MCP gateway: never needed here
    }
)


# ---------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class FunctionCall:
    name: str
    arguments: str


@dataclass(frozen=True)
class ToolCall:
    id: str
    function: FunctionCall
    type: str = "function"


@dataclass(frozen=True)
class ReplyMessage:
    content: str | None
    tool_calls: list[ToolCall] | None = None
    role: str = "assistant"


@dataclass(frozen=True)
class Choice:
    index: int
    message: ReplyMessage
    finish_reason: str | None = None


@dataclass(frozen=True)
class TokenUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


@dataclass(frozen=True)
class ChatCompletion:
    """A chat-completions reply. ``cost_usd`` is ``None``: a self-hosted endpoint has no
    list price (LiteLLM would report 0 for it too)."""

    id: str
    model: str
    choices: list[Choice]
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float | None = None


# ---------------------------------------------------------------------------- errors


class ModelHTTPError(Exception):
    """The endpoint answered with an HTTP error status."""

    def __init__(self, status_code: int, message: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code = status_code
        self.message = message
        self.headers = dict(headers)


class ModelConnectionError(ConnectionError):
    """The endpoint could not be reached, or dropped the connection."""


class ModelTimeout(TimeoutError):
    """No complete reply within the request's timeout."""


# ---------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class DirectRequest:
    """One chat-completions POST, ready to send."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]
    timeout_s: float


def _base_url(kwargs: Mapping[str, Any]) -> str | None:
    for value in (
        kwargs.get("api_base"),
        kwargs.get("base_url"),
        os.environ.get("OPENAI_BASE_URL"),
        os.environ.get("OPENAI_API_BASE"),
    ):
        if isinstance(value, str) and value.strip():
            return value.strip().rstrip("/")
    return None


def refusal(kwargs: Mapping[str, Any], *, include_openai: bool = False) -> str | None:
    """Why the direct client will not make a ``litellm.acompletion(**kwargs)`` call, or
    ``None`` when it will: not an ``openai/`` model, a model with a list price or no base
    URL / OpenAI's own (unless ``include_openai``: only LiteLLM reports their cost),
    streaming, retries asked of the transport, or an option this client does not know."""
    model = kwargs.get("model")
    if not isinstance(model, str) or not model.startswith(OPENAI_PREFIX):
        return f"it serves {OPENAI_PREFIX}<name> models only, not {model!r}"
    if not include_openai:
        if has_list_price(model[len(OPENAI_PREFIX) :]):
            return f"{model} has a list price: LiteLLM reports its cost"
        base = _base_url(kwargs)
        if base is None or (urlsplit(base).hostname or "") in OPENAI_HOSTS:
            return "the endpoint is OpenAI's own: LiteLLM reports its cost"
    if kwargs.get("stream"):
        return "it does not stream"
    unknown = unsupported_options(kwargs)
    if unknown:
        return f"it does not know {', '.join(unknown)}"
    if any(kwargs.get(option) for option in ("num_retries", "max_retries")):
        return "it never retries: set num_retries/max_retries to 0"
    return None


def direct_request(
    kwargs: Mapping[str, Any], *, include_openai: bool = False
) -> DirectRequest | None:
    """The direct form of a ``litellm.acompletion(**kwargs)`` call, or ``None`` when it
    must go through LiteLLM (:func:`refusal` says why)."""
    if refusal(kwargs, include_openai=include_openai) is not None:
        return None
    name = kwargs["model"][len(OPENAI_PREFIX) :]
    base = _base_url(kwargs) or "https://api.openai.com/v1"
    body: dict[str, Any] = {"model": name, "messages": kwargs["messages"]}
    body.update({k: v for k, v in kwargs.items() if k in BODY_OPTIONS and v is not None})
    extra_body = kwargs.get("extra_body")
    if isinstance(extra_body, Mapping):
        body.update(extra_body)
    headers = {"Content-Type": "application/json"}
    api_key = kwargs.get("api_key") or os.environ.get("OPENAI_API_KEY")
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    extra_headers = kwargs.get("extra_headers")
    if isinstance(extra_headers, Mapping):
        headers.update({str(k): str(v) for k, v in extra_headers.items()})
    timeout = kwargs.get("timeout")
    timeout_s = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None
    return DirectRequest(
        url=f"{base}/chat/completions",
        headers=headers,
        body=body,
        timeout_s=timeout_s or DEFAULT_TIMEOUT_S,
    )


def has_list_price(name: str) -> bool:
    """Whether LiteLLM's price map prices the OpenAI model ``name`` (read without
    importing LiteLLM when it is not loaded yet)."""
    prices = litellm_compat.price_map()
    return any(
        isinstance(prices.get(key), Mapping) and "input_cost_per_token" in prices[key]
        for key in (name, f"{OPENAI_PREFIX}{name}")
    )


def unsupported_options(kwargs: Mapping[str, Any]) -> list[str]:
    """The options of a call that the direct client does not understand, sorted."""
    return sorted(k for k in kwargs if k not in BODY_OPTIONS and k not in TRANSPORT_OPTIONS)


# ---------------------------------------------------------------------------- sending


def new_session() -> aiohttp.ClientSession:
    """A pooled HTTP session for many direct calls. No per-host cap: the run's
    concurrency and rate limits bound what is in flight."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300))


async def chat_completion(
    request: DirectRequest, session: aiohttp.ClientSession | None = None
) -> ChatCompletion:
    """POST ``request`` and parse the reply, over ``session`` (a pool shared by many
    calls) or, without one, over a connection of its own."""
    if session is not None and not session.closed:
        return await _post(session, request)
    async with aiohttp.ClientSession() as own:
        return await _post(own, request)


async def _post(session: aiohttp.ClientSession, request: DirectRequest) -> ChatCompletion:
    try:
        async with asyncio.timeout(request.timeout_s):
            async with session.post(
                request.url, data=json.dumps(request.body), headers=request.headers
            ) as response:
                raw = await response.read()
                status, headers = response.status, response.headers
    except TimeoutError as exc:
        raise ModelTimeout(f"no reply from {request.url} within {request.timeout_s:g} s") from exc
    except aiohttp.ClientError as exc:
        raise ModelConnectionError(f"{request.url}: {type(exc).__name__}: {exc}") from exc
    if status >= 400:
        raise ModelHTTPError(status, _error_message(raw), {k: v for k, v in headers.items()})
    try:
        document = json.loads(raw)
    except ValueError:
        raise MalformedReply(
            f"{request.url}: HTTP {status} reply is not JSON: {raw[:200]!r}"
        ) from None
    try:
        return parse_completion(document)
    except ValueError as exc:
        raise MalformedReply(f"{request.url}: {exc}") from None


def _error_message(raw: bytes) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the body's start."""
    try:
        document = json.loads(raw)
    except ValueError:
        return raw[:300].decode("utf-8", "replace")
    error = document.get("error") if isinstance(document, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, str):
        return message
    if isinstance(error, str):
        return error
    return raw[:300].decode("utf-8", "replace")


def parse_completion(document: Any) -> ChatCompletion:
    """A :class:`ChatCompletion` from a chat-completions JSON reply; a reply without the
    expected shape raises ``ValueError`` saying what is missing."""
    if not isinstance(document, dict) or not isinstance(document.get("choices"), list):
        raise ValueError(f"not a chat-completions reply (no 'choices' list): {document!r:.200}")
    choices = []
    for index, raw in enumerate(document["choices"]):
        message = raw.get("message") if isinstance(raw, dict) else None
        if not isinstance(message, dict):
            raise ValueError(f"choices[{index}] has no 'message' object")
        calls = [_tool_call(call) for call in message.get("tool_calls") or []]
        content = message.get("content")
        choices.append(
            Choice(
                index=int(raw.get("index", index)),
                message=ReplyMessage(
                    content=content if isinstance(content, str) else None,
                    tool_calls=calls or None,
                    role=str(message.get("role") or "assistant"),
                ),
                finish_reason=raw.get("finish_reason"),
            )
        )
    found = document.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    return ChatCompletion(
        id=str(document.get("id") or ""),
        model=str(document.get("model") or ""),
        choices=choices,
        usage=TokenUsage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=int(usage.get("total_tokens") or prompt + completion),
        ),
    )


def _tool_call(raw: Any) -> ToolCall:
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict):
        raise ValueError(f"a tool call without a 'function' object: {raw!r:.200}")
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    return ToolCall(
        id=str(raw.get("id") or ""),
        function=FunctionCall(name=str(function.get("name") or ""), arguments=arguments),
        type=str(raw.get("type") or "function"),
    )
