"""An agent that is a plain Python function.

The function takes, by parameter name, any of :data:`AGENT_PARAMS`, and returns the final
answer as a string, or a dict ``{"response": str, "tool_calls": [...]}`` reporting the tool
calls it made (each ``{"name", "args", "result", "error"?, "duration_ms"?, "id"?}``).
Synchronous functions run in worker threads of the agent's own
:class:`~agentflow_eval.agents.threads.AgentThreads` so they do not block the trials
running beside them; the trial's context (``current_session()``, ``trial_workdir()``) is
visible there too. A call that outlives its trial's timeout is abandoned to its thread,
which neither holds up later trials nor keeps the process alive at exit.

An agent instrumented with OpenTelemetry (a framework's GenAI spans, or spans of its own)
needs no recorder calls: each turn's spans are read into its events
(:mod:`agentflow_eval.agents.otel`), except the kinds of event the agent recorded itself.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from agentflow_eval.agents import otel
from agentflow_eval.agents.base import (
    AgentSession,
    SessionContext,
    TrajectoryRecorder,
)
from agentflow_eval.agents.threads import AgentThreads
from agentflow_eval.models.evalset import Message

__all__ = [
    "AGENT_PARAMS",
    "AgentReply",
    "PythonAgent",
    "ReportedToolCall",
    "record_reply",
]

AGENT_PARAMS: tuple[str, ...] = (
    "message",
    "recorder",
    "session",
    "history",
    "state",
    "workdir",
    "environment",
)
"""What an agent function may ask for: the user turn's text, the turn's recorder, the
:class:`SessionContext`, the prior messages of this session (a case's seeded history in
the OpenAI chat format, then this session's ``{"role", "content"}`` turns), a mutable
state dict kept across the session's turns (initialised from ``session_input.state``),
the trial's own directory, and the trial's own
:class:`~agentflow_eval.environments.environment.Environment` (``None`` when the run
sets up none)."""


class ReportedToolCall(BaseModel):
    """A tool call an agent reports having made (the dict shape agents return)."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(validation_alias=AliasChoices("name", "tool_name"))
    args: dict[str, Any] = Field(
        default_factory=dict, validation_alias=AliasChoices("args", "arguments")
    )
    result: Any = None
    error: str | None = None
    duration_ms: float = 0.0
    id: str | None = None

    def record(self, recorder: TrajectoryRecorder) -> None:
        recorder.tool_call(
            self.name,
            self.args,
            self.result,
            error=self.error,
            duration_ms=self.duration_ms,
            id=self.id,
        )


class AgentReply(BaseModel):
    """An agent's answer to one turn, with what it did on the way."""

    model_config = ConfigDict(extra="ignore")

    response: str
    tool_calls: list[ReportedToolCall] = Field(default_factory=list)
    intermediate_responses: list[str] = Field(default_factory=list)

    def record(self, recorder: TrajectoryRecorder) -> str:
        """Record the reported tool calls and intermediate responses; return the answer."""
        for call in self.tool_calls:
            call.record(recorder)
        for text in self.intermediate_responses:
            recorder.intermediate(text)
        return self.response


def record_reply(raw: Any, recorder: TrajectoryRecorder, *, source: str) -> str:
    """Read an agent's answer (a string or an :class:`AgentReply`-shaped dict), record its
    tool calls and intermediate responses, and return the final response text.

    ``source`` names the agent in error messages.
    """
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, dict):
        raise TypeError(
            f"{source} must return a str or a dict with a 'response' key, got {type(raw).__name__}"
        )
    try:
        reply = AgentReply.model_validate(raw)
    except ValidationError as exc:
        raise TypeError(f"{source} returned a dict that is not a valid reply: {exc}") from None
    return reply.record(recorder)


class PythonAgent:
    """Evaluate a Python function (sync or async) as an agent.

    >>> def agent(message: str, state: dict) -> str: ...
    >>> PythonAgent(agent)

    The config's MCP servers are its to call: an async function finds their tools in
    ``session.mcp_tools`` and calls one through ``recorder.acall_tool``.
    """

    mcp_supported = True

    def __init__(self, fn: Callable[..., Any], name: str | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"PythonAgent needs a callable, got {type(fn).__name__}")
        self._fn = fn
        self._name = name or getattr(fn, "__qualname__", None) or type(fn).__name__
        self._call = _Invocation.of(fn, self._name)

    @property
    def name(self) -> str:
        return self._name

    @property
    def fn(self) -> Callable[..., Any]:
        return self._fn

    async def start_session(self, context: SessionContext) -> AgentSession:
        state = copy.deepcopy(dict(context.session_input.state))
        return _PythonSession(
            call=self._call,
            name=self._name,
            context=context,
            state=state,
            history=copy.deepcopy(list(context.history)),
        )


@dataclass(frozen=True)
class _Invocation:
    """How to call the function: which parameters it wants, and how they are passed."""

    fn: Callable[..., Any]
    positional: tuple[str, ...]
    keyword: tuple[str, ...]
    is_async: bool
    threads: AgentThreads | None
    """Where a synchronous function runs (``None`` for an async one)."""

    @classmethod
    def of(cls, fn: Callable[..., Any], name: str) -> _Invocation:
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"agent {name!r}: cannot read its signature: {exc}") from exc
        positional: list[str] = []
        keyword: list[str] = []
        takes_all = False
        for param in signature.parameters.values():
            if param.kind is param.VAR_KEYWORD:
                takes_all = True
            elif param.kind is param.VAR_POSITIONAL:
                continue
            elif param.name in AGENT_PARAMS:
                target = positional if param.kind is param.POSITIONAL_ONLY else keyword
                target.append(param.name)
            elif param.default is param.empty:
                raise TypeError(
                    f"agent {name!r} has a required parameter {param.name!r}; an agent "
                    f"function may take only: {', '.join(AGENT_PARAMS)}"
                )
        if takes_all:
            keyword += [p for p in AGENT_PARAMS if p not in positional and p not in keyword]
        call = getattr(fn, "__call__", None)  # noqa: B004 - async callable objects too
        is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)
        return cls(
            fn=fn,
            positional=tuple(positional),
            keyword=tuple(keyword),
            is_async=is_async,
            threads=None if is_async else AgentThreads(name=f"agent {name!r}"),
        )

    def takes(self, name: str) -> bool:
        """Whether the function is given the agent parameter ``name``."""
        return name in self.positional or name in self.keyword

    async def __call__(self, values: dict[str, Any]) -> Any:
        args = [values[name] for name in self.positional]
        kwargs = {name: values[name] for name in self.keyword}
        if self.threads is None:
            return await self.fn(*args, **kwargs)
        result = await self.threads.run(self.fn, *args, **kwargs)
        if inspect.isawaitable(result):
            return await result
        return result


@dataclass
class _PythonSession:
    call: _Invocation
    name: str
    context: SessionContext
    state: dict[str, Any]
    history: list[dict[str, Any]] = field(default_factory=list)

    async def respond(self, message: Message, recorder: TrajectoryRecorder) -> str:
        text = message.text
        values: dict[str, Any] = {
            "message": text,
            "recorder": recorder,
            "session": self.context,
            "history": copy.deepcopy(self.history),
            "state": self.state,
            "environment": self.context.environment,
        }
        if self.call.takes("workdir"):  # made on first use: most agents never write files
            values["workdir"] = self.context.workdir
        # an agent instrumented with OpenTelemetry: its spans say what it did
        spans = otel.capture_turn(recorder)
        try:
            raw = await self.call(values)
            response = record_reply(raw, recorder, source=f"agent {self.name!r}")
        finally:
            if spans is not None:  # also when it failed or was cut short: what it did stands
                spans.finish()
        self.history.append({"role": message.role or "user", "content": text})
        self.history.append({"role": "assistant", "content": response})
        return response

    async def aclose(self) -> None:
        return None
