"""Keeping each trial's side effects its own: what the agent prints, the processes it
starts, and an ``os._exit`` it calls.

While the trial stage runs (:meth:`TrialIsolation.watching`):

- ``sys.stdout`` and ``sys.stderr`` route each write made in a trial's context to that
  trial (:mod:`agentflow_eval.run.agent_output`). A trial's context is its coroutine and
  the tasks it creates, the worker threads of a synchronous agent, and — because a
  thread started from a trial's context here runs in a copy of it, as asyncio tasks do —
  the threads the agent's code starts. A subprocess the trial starts with
  ``subprocess.Popen`` (or asyncio) without saying where its output goes writes into
  the trial's record too, through a pipe. Output written straight to file descriptors 1
  and 2 by native code or by a child started otherwise (``os.system``) is not routed.
- a subprocess a trial starts gets its environment's variables
  (:attr:`~agentflow_eval.environments.environment.Environment.variables`: the trial's
  database, the URL of its service) over the process's own, unless the caller passes
  an ``env`` of its own;
- processes started meanwhile are marked (:mod:`agentflow_eval.run.trial_processes`):
  those a trial started are killed when it ends, however it ended, and any left when
  the stage ends are killed then;
- ``os._exit`` called from a trial's context raises :class:`AgentExited` there, a
  ``SystemExit`` that fails that trial (naming it) instead of ending the run without a
  word. A forked child's ``os._exit`` is left alone.

The stage's patches are process-wide; stages running at once in one process share them
(the first installs them, the last removes them). Everything routes by the trial in the
caller's context, so concurrent trials never see each other's output.
"""

from __future__ import annotations

import asyncio
import codecs
import concurrent.futures.thread  # noqa: F401 - see below
import contextlib
import contextvars
import inspect
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, NoReturn

from agentflow_eval.agents.base import current_session
from agentflow_eval.models.results import AgentOutput, Trial, TrialError
from agentflow_eval.run.agent_output import OutputSink, RoutedStream
from agentflow_eval.run.trial_processes import STAGE_MARK_PREFIX, TRIAL_MARK, end_marked

__all__ = ["AgentExited", "TrialIsolation", "TrialScope"]

# ``asyncio.to_thread`` imports its thread pool on first use: imported here, before any
# agent runs, so that an agent that uses up the process's file descriptors fails its own
# trials, not the stage's first hand-off to a thread.

_READER_JOIN_S = 2.0
"""How long a finished trial waits for its subprocesses' last output to be read."""


class AgentExited(SystemExit):
    """The agent called ``os._exit`` during its trial: the trial's error."""

    def __init__(self, code: int, case_id: str, trial_index: int) -> None:
        super().__init__(
            f"the agent called os._exit({code}) during trial {trial_index + 1} of case "
            f"{case_id!r}; that trial failed and the run went on"
        )
        self.exit_code = code


@dataclass(eq=False)
class TrialScope:
    """One trial's share of the stage: its output streams and its process mark."""

    case_id: str
    trial_index: int
    mark: str = field(default_factory=lambda: uuid.uuid4().hex)
    stdout: OutputSink = field(default_factory=OutputSink)
    stderr: OutputSink = field(default_factory=OutputSink)
    spawned: bool = False
    readers: list[threading.Thread] = field(default_factory=list)
    exited: AgentExited | None = None
    """The ``os._exit`` the agent called, even if its own code caught what it raised."""

    def close(self) -> AgentOutput | None:
        """End the processes the trial started; what it printed (None if nothing), once
        its subprocesses' last output is read. Later writes are dropped."""
        if self.spawned:
            end_marked(TRIAL_MARK, self.mark)
        for reader in self.readers:
            reader.join(_READER_JOIN_S)
        out, err = self.stdout.close(), self.stderr.close()
        return AgentOutput(stdout=out, stderr=err) if out or err else None


_current: ContextVar[TrialScope | None] = ContextVar("agentflow_eval_trial", default=None)


class TrialIsolation:
    """The trial stage's isolation (see the module)::

    isolation = TrialIsolation()
    with isolation.watching():
        ...
        with isolation.trial(case_id, index) as scope:
            trial = await run_trial(...)
        trial = await isolation.finished(trial, scope)
    """

    def __init__(self) -> None:
        self._stage_mark = f"{STAGE_MARK_PREFIX}{uuid.uuid4().hex}"

    @contextlib.contextmanager
    def watching(self) -> Iterator[TrialIsolation]:
        """Install the routing and guards for the stage; end what it left running."""
        _PATCHES.acquire()
        os.environ[self._stage_mark] = "1"
        try:
            yield self
        finally:
            os.environ.pop(self._stage_mark, None)
            _PATCHES.release()
            end_marked(self._stage_mark, "1")

    @contextlib.contextmanager
    def trial(self, case_id: str, trial_index: int) -> Iterator[TrialScope]:
        """The trial's context for the block (the stage ends its processes if the trial
        never gets to :meth:`finished`)."""
        scope = TrialScope(case_id, trial_index)
        token = _current.set(scope)
        try:
            yield scope
        finally:
            _current.reset(token)

    @staticmethod
    async def finished(trial: Trial, scope: TrialScope) -> Trial:
        """``trial`` with what its agent printed, once the processes it started are
        ended (off the event loop: it reads ``/proc`` and waits for their last output)."""
        output = await asyncio.to_thread(scope.close)
        update: dict[str, Any] = {}
        if output is not None:
            update["agent_output"] = output
        if scope.exited is not None and trial.error is None:
            # the agent caught what os._exit raised and went on: the process would be gone
            update["error"] = TrialError(
                kind="exception", type=type(scope.exited).__name__, message=str(scope.exited)
            )
        return trial.model_copy(update=update) if update else trial


def _route(stream: str) -> Callable[[], OutputSink | None]:
    def route() -> OutputSink | None:
        scope = _current.get()
        if scope is None:
            return None
        return scope.stdout if stream == "stdout" else scope.stderr

    return route


class _Patches:
    """The process-wide patches, counted so concurrent stages share one installation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._saved: dict[str, Any] = {}

    def acquire(self) -> None:
        with self._lock:
            self._count += 1
            if self._count > 1:
                return
            pid = os.getpid()
            self._saved = {
                "stdout": sys.stdout,
                "stderr": sys.stderr,
                "start": threading.Thread.start,
                "popen": subprocess.Popen.__init__,
                "exit": os._exit,
            }
            sys.stdout = RoutedStream(sys.stdout, _route("stdout"), "<stdout>")
            sys.stderr = RoutedStream(sys.stderr, _route("stderr"), "<stderr>")
            threading.Thread.start = _inheriting_start(self._saved["start"])  # type: ignore[method-assign]
            subprocess.Popen.__init__ = _marking_popen(self._saved["popen"])  # type: ignore[method-assign]
            setattr(os, "_exit", _guarded_exit(self._saved["exit"], pid))  # noqa: B010 - typed as the builtin

    def release(self) -> None:
        with self._lock:
            self._count -= 1
            if self._count > 0:
                return
            saved = self._saved
            if isinstance(sys.stdout, RoutedStream):
                sys.stdout = saved["stdout"]
            if isinstance(sys.stderr, RoutedStream):
                sys.stderr = saved["stderr"]
            threading.Thread.start = saved["start"]  # type: ignore[method-assign]
            subprocess.Popen.__init__ = saved["popen"]  # type: ignore[method-assign]
            os._exit = saved["exit"]


_PATCHES = _Patches()


def _inheriting_start(start: Callable[[threading.Thread], None]) -> Any:
    def inheriting_start(thread: threading.Thread) -> None:
        if _current.get() is not None:
            context = contextvars.copy_context()
            run = thread.run
            thread.run = lambda: context.run(run)  # type: ignore[method-assign]
        start(thread)

    return inheriting_start


def _marking_popen(init: Callable[..., None]) -> Any:
    signature = inspect.signature(init)

    def marking_init(popen: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        scope = _current.get()
        if scope is None:
            init(popen, *args, **kwargs)
            return
        bound = signature.bind(popen, *args, **kwargs)
        given = bound.arguments
        env = given.get("env")
        session = current_session()
        variables = session.environment.variables if session and session.environment else {}
        given["env"] = {
            **(dict(os.environ, **variables) if env is None else env),
            TRIAL_MARK: scope.mark,
        }
        pipes: list[tuple[int, int, OutputSink]] = []  # (read end, write end, sink)
        for stream, sink in (("stdout", scope.stdout), ("stderr", scope.stderr)):
            if given.get(stream) is None:  # it would have written to ours: to the trial's
                read_end, write_end = os.pipe()
                given[stream] = write_end
                pipes.append((read_end, write_end, sink))
        scope.spawned = True
        try:
            init(*bound.args, **bound.kwargs)
        except BaseException:
            for read_end, _, _ in pipes:
                os.close(read_end)
            raise
        finally:
            for _, write_end, _ in pipes:  # the child holds its own copy
                os.close(write_end)
        for read_end, _, sink in pipes:
            reader = threading.Thread(
                target=_pump, args=(read_end, sink), name="agentflow trial output", daemon=True
            )
            reader.start()
            scope.readers.append(reader)

    return marking_init


def _pump(read_end: int, sink: OutputSink) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    with open(read_end, "rb", buffering=0) as pipe:
        while chunk := pipe.read(65536):
            sink.write(decoder.decode(chunk))
    sink.write(decoder.decode(b"", final=True))


def _guarded_exit(real_exit: Callable[[int], NoReturn], pid: int) -> Callable[[int], NoReturn]:
    def guarded_exit(code: int) -> NoReturn:
        scope = _current.get()
        if scope is None or os.getpid() != pid:  # not a trial's, or a forked child's
            real_exit(code)
        scope.exited = AgentExited(code, scope.case_id, scope.trial_index)
        raise scope.exited

    return guarded_exit
