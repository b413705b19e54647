"""An agent served over HTTP, in one of two shapes.

``openai``: the agent looks like a chat-completions endpoint. Each turn POSTs
``{"model", "messages": [...history, user]}`` and reads ``choices[0].message.content``
(a case's seeded history opens ``history``, in the same wire format).
Tool calls the remote agent ran may be reported in that message's ``tool_calls`` (OpenAI
shape, optionally with a ``result``) or in a top-level ``agentflow_tool_calls`` list of
``{"name", "args", "result", "error"?}``; ``usage`` is read as OpenAI reports it.

``simple``: each turn POSTs ``{"message", "session_id", "history", "state"}`` (the seeded
history, then the session's ``{"role", "content"}`` turns) and reads
``{"response": str, "tool_calls": [...], "state"?: {...}, "usage"?: {...}}``. A returned
``state`` replaces the session's state for the next turn, and the state when the
conversation ends is the trial's final session state. An ``openai``-shaped agent keeps its
state to itself: its sessions report none.

Each session has its own ``httpx.AsyncClient``; a non-2xx answer raises
:class:`HttpAgentError` with the status and the start of the body.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, get_args

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentflow_eval.agents.base import AgentSession, SessionContext, TrajectoryRecorder
from agentflow_eval.agents.python import AgentReply, ReportedToolCall
from agentflow_eval.models.evalset import Message

__all__ = ["HttpAgent", "HttpAgentError", "HttpShape"]

HttpShape = Literal["openai", "simple"]
_BODY_SNIPPET = 500
_M = TypeVar("_M", bound=BaseModel)


class HttpAgentError(RuntimeError):
    """The remote agent answered with an error status or a body we cannot read."""


class HttpAgent:
    """Evaluate an agent that is reachable over HTTP (see the module docstring)."""

    tool_mocks_supported = False
    """Its tools run in its own service: no tool mock can answer for them."""

    def __init__(
        self,
        url: str,
        *,
        shape: HttpShape = "openai",
        headers: dict[str, str] | None = None,
        timeout_s: float = 60.0,
        model: str | None = None,
        name: str | None = None,
    ) -> None:
        if shape not in get_args(HttpShape):
            raise ValueError(
                f"unknown HTTP agent shape {shape!r}; expected one of: "
                f"{', '.join(get_args(HttpShape))}"
            )
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"an HTTP agent URL must start with http:// or https://, got {url!r}")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.url = url
        self.shape: HttpShape = shape
        self.headers = dict(headers or {})
        self.timeout_s = timeout_s
        self.model = model
        self._name = name

    @property
    def name(self) -> str:
        return self._name or self.url

    async def start_session(self, context: SessionContext) -> AgentSession:
        client = httpx.AsyncClient(headers=self.headers, timeout=self.timeout_s)
        # only the simple shape carries the session state to and from the agent
        state = copy.deepcopy(dict(context.session_input.state)) if self.shape == "simple" else None
        history = copy.deepcopy(list(context.history))
        return _HttpSession(
            agent=self, context=context, client=client, state=state, history=history
        )


@dataclass
class _HttpSession:
    agent: HttpAgent
    context: SessionContext
    client: httpx.AsyncClient
    state: dict[str, Any] | None
    history: list[dict[str, Any]] = field(default_factory=list)

    async def respond(self, message: Message, recorder: TrajectoryRecorder) -> str:
        user = {"role": message.role or "user", "content": message.text}
        if self.agent.shape == "openai":
            response = await self._openai_turn(user, recorder)
        else:
            response = await self._simple_turn(user, recorder)
        self.history += [user, {"role": "assistant", "content": response}]
        return response

    async def aclose(self) -> None:
        await self.client.aclose()

    async def _openai_turn(self, user: dict[str, str], recorder: TrajectoryRecorder) -> str:
        body: dict[str, Any] = {"messages": [*self.history, user]}
        if self.agent.model is not None:
            body["model"] = self.agent.model
        data = _parse(_ChatCompletion, await self._post(body), self.agent.url)
        _record_usage(recorder, data.usage)
        reply = data.choices[0].message
        for call in reply.tool_calls:
            recorder.tool_call(
                call.function.name,
                _arguments(call.function.arguments),
                call.result,
                error=call.error,
                id=call.id,
            )
        for reported in data.agentflow_tool_calls:
            reported.record(recorder)
        return reply.content or ""

    async def _simple_turn(self, user: dict[str, str], recorder: TrajectoryRecorder) -> str:
        body = {
            "message": user["content"],
            "session_id": self.context.session_id,
            "history": list(self.history),
            "state": self.state,
        }
        data = _parse(_SimpleReply, await self._post(body), self.agent.url)
        _record_usage(recorder, data.usage)
        if data.state is not None:
            self.state = dict(data.state)
        return data.record(recorder)

    async def _post(self, body: dict[str, Any]) -> Any:
        response = await self.client.post(self.agent.url, json=body)
        text = response.text
        if not response.is_success:
            raise HttpAgentError(
                f"HTTP agent {self.agent.url} answered {response.status_code} "
                f"{response.reason_phrase}: {text[:_BODY_SNIPPET]}"
            )
        try:
            return response.json()
        except json.JSONDecodeError:
            raise HttpAgentError(
                f"HTTP agent {self.agent.url} answered {response.status_code} with a body "
                f"that is not JSON: {text[:_BODY_SNIPPET]!r}"
            ) from None


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _WireUsage(_Wire):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None


class _WireFunction(_Wire):
    name: str
    arguments: str | dict[str, Any] | None = None


class _WireToolCall(_Wire):
    id: str | None = None
    function: _WireFunction
    result: Any = None
    error: str | None = None


class _WireMessage(_Wire):
    content: str | None = None
    tool_calls: list[_WireToolCall] = Field(default_factory=list)


class _WireChoice(_Wire):
    message: _WireMessage


class _ChatCompletion(_Wire):
    choices: list[_WireChoice] = Field(min_length=1)
    usage: _WireUsage | None = None
    agentflow_tool_calls: list[ReportedToolCall] = Field(default_factory=list)


class _SimpleReply(AgentReply):
    state: dict[str, Any] | None = None
    usage: _WireUsage | None = None


def _parse(model: type[_M], raw: Any, url: str) -> _M:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        snippet = json.dumps(raw)[:_BODY_SNIPPET]
        raise HttpAgentError(
            f"HTTP agent {url} answered with an unexpected body ({exc.error_count()} "
            f"problem(s): {_first_error(exc)}): {snippet}"
        ) from None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(body)"
    return f"{where}: {err['msg']}"


def _arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """OpenAI sends arguments as a JSON string; keep unparsable ones visible."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        return {"_raw_arguments": raw}
    return parsed if isinstance(parsed, dict) else {"_raw_arguments": raw}


def _record_usage(recorder: TrajectoryRecorder, usage: _WireUsage | None) -> None:
    if usage is not None:
        recorder.usage(usage.prompt_tokens, usage.completion_tokens, usage.cost_usd)
