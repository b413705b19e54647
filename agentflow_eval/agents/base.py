"""The agent under test, as the evaluator sees it: a factory of fresh sessions, each of
which answers user turns and reports what it did through a recorder.

Adapters for Python callables, the built-in LiteLLM tool agent and HTTP agents live
beside this file; anything that implements :class:`AgentUnderTest` can be evaluated.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.evalset import Message, SessionInput
from agentflow_eval.models.results import RecordedToolCall, Usage

__all__ = [
    "AgentSession",
    "AgentUnderTest",
    "MaxStepsExceeded",
    "SessionContext",
    "TrajectoryRecorder",
    "current_session",
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


@dataclass
class TrajectoryRecorder:
    """Collects one turn's tool calls, intermediate responses and usage.

    An agent (or its tools) calls :meth:`tool_call`, or wraps a call in :meth:`tool`,
    for every tool it runs; :meth:`usage` for every model call it makes.
    """

    tool_calls: list[RecordedToolCall] = field(default_factory=list)
    intermediate_responses: list[str] = field(default_factory=list)
    usage_total: Usage = field(default_factory=Usage)

    def tool_call(
        self,
        name: str,
        args: dict[str, Any] | None = None,
        result: Any = None,
        *,
        error: str | None = None,
        duration_ms: float = 0.0,
        id: str | None = None,
    ) -> RecordedToolCall:
        call = RecordedToolCall(
            name=name,
            args=dict(args or {}),
            result=_jsonable(result),
            error=error,
            duration_ms=duration_ms,
            id=id,
        )
        self.tool_calls.append(call)
        return call

    @contextmanager
    def tool(self, name: str, args: dict[str, Any] | None = None) -> Iterator[RecordedToolCall]:
        """Time a tool call; set ``.result`` on the yielded record. An exception is
        recorded as the call's error and re-raised."""
        call = self.tool_call(name, args)
        start = time.perf_counter()
        try:
            yield call
        except Exception as exc:
            call.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            call.duration_ms = (time.perf_counter() - start) * 1000
            call.result = _jsonable(call.result)

    def intermediate(self, text: str) -> None:
        if text:
            self.intermediate_responses.append(text)

    def usage(
        self, prompt_tokens: int = 0, completion_tokens: int = 0, cost_usd: float = 0.0
    ) -> None:
        self.usage_total.add(
            Usage(
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                total_tokens=prompt_tokens + completion_tokens,
                cost_usd=cost_usd,
                calls=1,
            )
        )


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


def _jsonable(value: Any) -> Any:
    """Tool results go into JSON files: keep JSON values, stringify the rest."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _jsonable(dump(mode="json"))
    return repr(value)


@contextmanager
def bind_session(context: SessionContext) -> Iterator[None]:
    """Make ``context`` the current session for the code running inside (the trial)."""
    token = _current_session.set(context)
    try:
        yield
    finally:
        _current_session.reset(token)
