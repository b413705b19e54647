"""The agent under test, as the evaluator sees it: a factory of fresh sessions, each of
which answers user turns and reports what it did through a recorder.

Adapters for Python callables, the built-in LiteLLM tool agent and HTTP agents live
beside this file; anything that implements :class:`AgentUnderTest` can be evaluated.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agentflow_eval.agents.tool_gate import (
    NO_MOCKS,
    MockBypassed,
    ServedBy,
    ToolCallFailed,
    ToolGate,
)
from agentflow_eval.environments.environment import Environment
from agentflow_eval.environments.mcp import McpTool
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.evalset import Message, SessionInput
from agentflow_eval.models.results import (
    HandoffEvent,
    MessageEvent,
    ModelCallEvent,
    NodeEvent,
    RecordedToolCall,
    ToolCallEvent,
    TrajectoryEvent,
    Usage,
)

__all__ = [
    "AgentSession",
    "AgentUnderTest",
    "MaxStepsExceeded",
    "SessionContext",
    "TrajectoryRecorder",
    "current_session",
    "jsonable",
    "trial_environment",
    "trial_workdir",
]


@dataclass(frozen=True)
class SessionContext:
    """Everything a fresh session may need: who it is for, where it may write, and the
    run's client for model calls.

    ``workdir_path`` is reserved for the session alone; the directory is created the
    first time :attr:`workdir` is read, so trials whose agent never writes files cost no
    file-system work."""

    case_id: str
    trial_index: int
    session_id: str
    session_input: SessionInput
    workdir_path: Path
    models: ModelClient = field(default_factory=ModelClient)
    """The run's model client: calls made through it share the run's rate limits and
    connections (the built-in LiteLLM agent uses it; so may any agent)."""
    history: tuple[dict[str, Any], ...] = ()
    """The conversation so far (a case's seeded ``history``), in the OpenAI chat wire
    format: ``{"role": "user" | "assistant" | "tool", "content"}``, an assistant's
    ``tool_calls`` as ``{"id", "type": "function", "function": {"name", "arguments":
    "<JSON>"}}``, a tool message's ``tool_call_id``. A session starts its conversation
    with it; an agent that cannot says ``history_supported = False`` and such a case is
    refused before the run."""
    environment: Environment | None = None
    """The trial's own environment (its database, folder, variables), when the run
    sets one up for each trial (an eval set's or config's ``environment``)."""
    mcp_tools: tuple[McpTool, ...] = ()
    """The tools of the config's MCP servers, started for this trial (or for the run):
    an agent kind that offers them to its model says ``mcp_supported = True``; a
    hand-written agent calls one with ``await recorder.acall_tool(tool, **args)``."""

    def mcp_tool(self, name: str) -> McpTool | None:
        """The MCP servers' tool called ``name`` (``None`` when no server serves one)."""
        return next((tool for tool in self.mcp_tools if tool.name == name), None)

    @property
    def workdir(self) -> Path:
        """The session's own directory (private to this user), created on first use."""
        self.workdir_path.mkdir(mode=0o700, parents=True, exist_ok=True)
        return self.workdir_path


class MaxStepsExceeded(RuntimeError):
    """The agent used its whole step budget without a final answer."""

    def __init__(self, max_steps: int) -> None:
        super().__init__(f"no final answer within {max_steps} steps")
        self.max_steps = max_steps


class TrajectoryRecorder:
    """Collects what happens in one turn, in order: tool calls, messages, model calls with
    their usage, node visits and handoffs (:attr:`events`).

    A hand-written agent calls its tools through :meth:`call_tool` (or
    :meth:`acall_tool`), where a mock can answer instead; a call its own code makes is
    wrapped in :meth:`tool` or reported after the fact with :meth:`tool_call`. It reports
    every model call it makes with :meth:`usage`; framework adapters add what the
    framework reports with :meth:`add`. docs/agents.md lists every public member. Each event is
    stamped with the milliseconds since the turn started. The trial holds the same list, so
    a turn cut short keeps what happened before it was cut.
    """

    def __init__(self, tools: ToolGate = NO_MOCKS) -> None:
        self.events: list[TrajectoryEvent] = []
        self.tools = tools
        """The turn's tool gate: the mocks, injected faults and unmocked policy its tool
        calls go through (see :mod:`agentflow_eval.agents.tool_gate`)."""
        self._started = time.perf_counter()

    def elapsed_ms(self) -> float:
        """Milliseconds since the turn started."""
        return (time.perf_counter() - self._started) * 1000

    def add(self, event: TrajectoryEvent) -> TrajectoryEvent:
        """Record ``event`` as it is (an adapter that knows when it happened sets
        ``at_ms``; otherwise it is stamped now)."""
        if not event.at_ms:
            event.at_ms = self.elapsed_ms()
        self.events.append(event)
        return event

    def merge(self, events: Sequence[TrajectoryEvent]) -> None:
        """Add events observed after the fact (each stamped with its ``at_ms``, in time
        order), each before the first recorded event that happened later; the recorded
        events keep their order. Used for what an agent's own telemetry reports once its
        turn is over (:mod:`agentflow_eval.agents.otel`)."""
        if not events:
            return
        merged: list[TrajectoryEvent] = []
        pending = iter(sorted(events, key=lambda event: event.at_ms))
        nxt = next(pending, None)
        for recorded in self.events:
            while nxt is not None and nxt.at_ms <= recorded.at_ms:
                merged.append(nxt)
                nxt = next(pending, None)
            merged.append(recorded)
        if nxt is not None:
            merged.append(nxt)
            merged.extend(pending)
        self.events[:] = merged  # in place: the trial's turn holds this very list

    def tool_call(
        self,
        name: str,
        args: dict[str, Any] | None = None,
        result: Any = None,
        *,
        error: str | None = None,
        duration_ms: float = 0.0,
        id: str | None = None,
        author: str | None = None,
        served_by: ServedBy = "tool",
    ) -> RecordedToolCall:
        call = RecordedToolCall(
            name=name,
            args=dict(args or {}),
            result=jsonable(result),
            error=error,
            duration_ms=duration_ms,
            id=id,
            served_by=served_by,
        )
        self.add(ToolCallEvent(call=call, author=author))
        return call

    @contextmanager
    def tool(
        self, name: str, args: dict[str, Any] | None = None, *, author: str | None = None
    ) -> Iterator[RecordedToolCall]:
        """Time a tool call made in the ``with`` block; set ``.result`` on the yielded
        record. An exception is recorded as the call's error and re-raised.

        The block is the tool's own code, so a mock cannot answer for it: a call a mock
        would answer raises :class:`~agentflow_eval.agents.tool_gate.MockBypassed` (call
        the tool with :meth:`call_tool` instead). A call failed by an injected fault or the
        unmocked policy raises its error before the block runs."""
        stand_in = self.tools.decide(name, dict(args or {})) if self.tools.active else None
        if stand_in is not None:
            if stand_in.error is None:
                raise MockBypassed(name)
            self.tool_call(
                name, args, error=stand_in.error, author=author, served_by=stand_in.served_by
            )
            raise stand_in.exception()
        call = self.tool_call(name, args, author=author)
        start = time.perf_counter()
        try:
            yield call
        except Exception as exc:
            call.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            call.duration_ms = (time.perf_counter() - start) * 1000
            call.result = jsonable(call.result)

    def call_tool(self, tool: Callable[..., Any], /, **args: Any) -> Any:
        """Call ``tool`` (a function, or a :class:`~agentflow_eval.agents.tools.Tool`)
        with ``args`` through the turn's tool gate, record the call, and return its
        result: what a mock answers instead (the function does not run), else the
        function's. A failed call raises, as the tool would. An MCP server's tool
        (``SessionContext.mcp_tools``) is called with :meth:`acall_tool`."""
        if isinstance(tool, McpTool):
            raise TypeError(
                f"MCP tool {tool.name!r} is called over its server's session: await "
                "recorder.acall_tool(tool, ...) from an async agent"
            )
        name, fn = _named(tool)
        call = self.tool_call(name, args)
        start = time.perf_counter()
        try:
            result, call.served_by = self.tools.run_sync(name, args, lambda: fn(**args))
        except Exception as exc:
            self._failed(call, exc)
            raise
        finally:
            call.duration_ms = (time.perf_counter() - start) * 1000
        call.result = jsonable(result)
        return result

    async def acall_tool(self, tool: Callable[..., Any] | McpTool, /, **args: Any) -> Any:
        """:meth:`call_tool` for async agents: an async function is awaited, a synchronous
        one runs in a worker thread, and an MCP server's tool (one of
        ``SessionContext.mcp_tools``) is called on its server; a mock answers for any of
        them alike."""
        name, fn = _named(tool)

        async def real() -> Any:
            if inspect.iscoroutinefunction(fn):
                return await fn(**args)
            result = await asyncio.to_thread(fn, **args)
            return await result if inspect.isawaitable(result) else result

        call = self.tool_call(name, args)
        start = time.perf_counter()
        try:
            result, call.served_by = await self.tools.run(name, args, real)
        except Exception as exc:
            self._failed(call, exc)
            raise
        finally:
            call.duration_ms = (time.perf_counter() - start) * 1000
        call.result = jsonable(result)
        return result

    @staticmethod
    def _failed(call: RecordedToolCall, exc: Exception) -> None:
        if isinstance(exc, ToolCallFailed):
            call.error, call.served_by = str(exc), exc.served_by
        else:
            call.error = f"{type(exc).__name__}: {exc}"

    def intermediate(self, text: str, *, author: str | None = None) -> None:
        """Text the agent said before its answer (between tool calls)."""
        if text:
            self.add(MessageEvent(text=text, author=author))

    def usage(
        self,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost_usd: float | None = None,
        *,
        model: str | None = None,
        latency_ms: float | None = None,
        author: str | None = None,
    ) -> None:
        """One model call the agent made, with what it used (``cost_usd`` None: its price
        is unknown)."""
        self.add(
            ModelCallEvent(
                model=model,
                usage=Usage.of_call(prompt_tokens, completion_tokens, cost_usd),
                latency_ms=latency_ms,
                author=author,
            )
        )

    def node(self, name: str, path: Sequence[str] = (), *, author: str | None = None) -> None:
        """A step began: a graph node, an agent or a sub-agent taking its turn."""
        self.add(NodeEvent(name=name, path=list(path), author=author))

    def handoff(self, target: str, source: str | None = None) -> None:
        """Control passed from ``source`` to the agent ``target``."""
        self.add(HandoffEvent(target=target, source=source, author=source))

    @property
    def tool_calls(self) -> list[RecordedToolCall]:
        return [event.call for event in self.events if isinstance(event, ToolCallEvent)]

    @property
    def intermediate_responses(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, MessageEvent) and not e.final]

    @property
    def usage_total(self) -> Usage:
        return Usage.total([e.usage for e in self.events if isinstance(e, ModelCallEvent)])


@runtime_checkable
class AgentSession(Protocol):
    """One conversation with the agent. Fresh for every trial.

    A session that keeps the agent's state exposes it as a ``state`` dict; the trial
    records it when the conversation ends (``Trial.final_session_state``)."""

    async def respond(self, message: Message, recorder: TrajectoryRecorder) -> str:
        """Answer one user turn; return the final response text."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class AgentUnderTest(Protocol):
    """A factory of fresh sessions."""

    @property
    def name(self) -> str: ...

    async def start_session(self, context: SessionContext) -> AgentSession: ...


_current_session: contextvars.ContextVar[SessionContext | None] = contextvars.ContextVar(
    "agentflow_eval_session", default=None
)


def current_session() -> SessionContext | None:
    """The session of the trial running in this asyncio task, if any."""
    return _current_session.get()


def trial_workdir() -> Path:
    """The running trial's own temporary directory: where tools should write.

    Trials run concurrently in one process, so the process working directory is shared;
    this per-trial directory is not. Outside a trial it is the current directory.
    """
    session = _current_session.get()
    return session.workdir if session is not None else Path.cwd()


def trial_environment() -> Environment | None:
    """The running trial's own environment (``None`` outside a trial, or when the run
    sets up none): what a tool reads to reach the trial's database or service."""
    session = _current_session.get()
    return session.environment if session is not None else None


def _named(tool: Callable[..., Any] | McpTool) -> tuple[str, Callable[..., Any]]:
    """A tool's name and the function that runs it (a ``Tool`` holds its function; an
    MCP server's tool is called through its session)."""
    if isinstance(tool, McpTool):
        served = tool

        async def call_server(**args: Any) -> Any:
            return await served.call(args)

        return served.name, call_server
    fn = getattr(tool, "fn", None)
    name = getattr(tool, "name", None)
    if callable(fn) and isinstance(name, str):
        return name, fn
    return str(getattr(tool, "__name__", type(tool).__name__)), tool


def jsonable(value: Any) -> Any:
    """Tool results go into JSON files: keep JSON values, stringify the rest."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return jsonable(dump(mode="json"))
    return repr(value)


@contextmanager
def bind_session(context: SessionContext) -> Iterator[None]:
    """Make ``context`` the current session for the code running inside (the trial)."""
    token = _current_session.set(context)
    try:
        yield
    finally:
        _current_session.reset(token)
