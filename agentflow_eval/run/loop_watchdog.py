"""Noticing an async agent that blocks the event loop, and stopping its trial.

Trials run as coroutines on one event loop. An ``async`` agent that makes a blocking call
(``time.sleep``, a synchronous HTTP client, a long computation) stops the loop: no other
trial advances, no timeout fires — a trial's timeout is itself a loop callback — and
everything else sharing the loop (progress reports, Prefect's own calls) stalls with it.

A :class:`LoopWatchdog` is a daemon thread that asks the loop for a heartbeat
(``call_soon_threadsafe``) every fraction of a second. When no heartbeat comes while the
loop thread does ``limit_s`` of its own work — CPU time it uses, or time it waits in a
blocking call; not time it stands ready while the machine's load keeps it off the CPU
(:mod:`agentflow_eval.run.thread_clock`) — the loop is blocked; if the task running then
is a trial inside its agent's code (a :meth:`LoopWatchdog.guard` region), the watchdog

1. records the block (how long, and where: the agent's frame and the innermost one);
2. interrupts the blocking call when the loop runs in the main thread: a signal
   (:data:`INTERRUPT_SIGNAL`) wakes the blocked system call, and its handler raises
   :class:`EventLoopBlocked` there — only if the main thread is still inside that trial's
   agent code, so the exception never lands anywhere else;
3. once the loop turns again, cancels the trial if it is still running.

An agent that catches the interruption and blocks on is interrupted again, every
``limit_s / 2`` of the loop thread's own work. One that has swallowed them all for
``abandon_after_s`` of own work holds the only thread the run has: nothing else can move,
so ``on_unstoppable`` is told (the trial stage records that trial as errored and ends the
process, leaving a run folder that resumes).

The trial is then recorded as failed, with a reason that names the agent (see
:func:`agentflow_eval.run.trial.run_trial`). A block outside any agent's code is waited
out and left alone, and so is a module import (a first ``import litellm`` takes seconds;
an import stopped halfway would leave the module broken for the rest of the process).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from agentflow_eval.run.thread_clock import ThreadClock

__all__ = [
    "DEFAULT_LIMIT_S",
    "INTERRUPT_SIGNAL",
    "EventLoopBlocked",
    "LoopBlock",
    "LoopWatchdog",
]

DEFAULT_LIMIT_S = 10.0
"""How long the loop may stand still inside an agent before the agent is stopped (at most
the trial timeout)."""

INTERRUPT_SIGNAL = getattr(signal, "SIGUSR2", None)
"""The signal that interrupts a blocked loop thread (POSIX only; elsewhere the block is
detected and its trial cancelled once it ends)."""

_PACKAGE_DIR = __file__.rsplit("/run/", 1)[0]


class EventLoopBlocked(BaseException):
    """Raised inside an async agent that blocked the event loop. A ``BaseException``, like
    ``CancelledError``: an agent's ``except Exception`` does not swallow it."""


@dataclass
class LoopBlock:
    """One block of the event loop by an agent."""

    seconds: float
    where: str
    """The agent's own frame and the innermost one, e.g. ``agent (my_agent.py:12), at
    time.sleep``; empty when the stack could not be read."""
    interrupted: bool = False
    ended: bool = False


@dataclass(eq=False)
class _Guard:
    """A trial task inside its agent's code."""

    task: asyncio.Task[Any]
    frame: FrameType | None
    active: bool = True
    block: LoopBlock | None = None
    interrupt_pending: bool = False
    key: Any = None
    """Whose agent this is (the trial stage's (case, trial) key), for ``on_unstoppable``."""
    abandoned: bool = False


@dataclass(eq=False)
class LoopWatchdog:
    """Watches the running loop while :meth:`watching` (see the module doc)."""

    limit_s: float = DEFAULT_LIMIT_S
    interval_s: float = 0.25
    blocks: list[LoopBlock] = field(default_factory=list)
    clock_of: Callable[[], ThreadClock] = ThreadClock.of_current_thread
    """Makes the loop thread's own-work clock (called in that thread)."""
    abandon_after_s: float | None = None
    """Own work of the loop thread, after the first interruption, before a blocking agent
    that swallows every interruption is given up on (``None``: never)."""
    on_unstoppable: Callable[[LoopBlock, Any], None] | None = None
    """Called (in the watchdog's thread) with the block and the guard's key once an agent
    has been given up on; it does not return when it ends the process."""
    _guards: dict[asyncio.Task[Any], _Guard] = field(default_factory=dict, init=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, init=False)
    _loop_thread: int | None = field(default=None, init=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _signal_ready: bool = field(default=False, init=False)
    _clock: ThreadClock = field(init=False)

    def __post_init__(self) -> None:
        if self.limit_s <= 0:
            raise ValueError(f"limit_s must be positive, got {self.limit_s}")
        self.interval_s = min(self.interval_s, self.limit_s / 4)

    @contextlib.contextmanager
    def watching(self) -> Iterator[LoopWatchdog]:
        """Watch the running loop for the block (call it from a coroutine)."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._clock = self.clock_of()
        self._stop.clear()
        previous = self._install_signal()
        thread = threading.Thread(target=self._watch, name="agentflow loop watchdog", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()
            if self._signal_ready and INTERRUPT_SIGNAL is not None:
                signal.signal(INTERRUPT_SIGNAL, previous)
                self._signal_ready = False

    @contextlib.contextmanager
    def guard(self, key: Any = None) -> Iterator[_Guard]:
        """Mark the current task as running agent code for the block (``key`` says whose,
        for ``on_unstoppable``); yields the guard whose ``block`` says whether the agent
        blocked the loop meanwhile."""
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("LoopWatchdog.guard() needs a running task")
        # the caller's frame (run_trial)
        guard = _Guard(task=task, frame=sys._getframe(2), key=key)
        self._guards[task] = guard
        try:
            yield guard
        finally:
            guard.active = False
            guard.interrupt_pending = False
            if self._guards.get(task) is guard:
                del self._guards[task]

    # ------------------------------------------------------------------ watchdog thread

    def _watch(self) -> None:
        assert self._loop is not None
        clock = self._clock
        beat = threading.Event()
        while not self._stop.is_set():
            beat.clear()
            try:
                self._loop.call_soon_threadsafe(beat.set)
            except RuntimeError:  # the loop closed
                return
            asked = time.monotonic()
            clock.restart()
            own = 0.0  # the loop thread's own work while the beat is awaited
            while not beat.wait(self.interval_s) and own < self.limit_s:
                own += clock.advance()
                if self._stop.is_set():
                    return
            if beat.is_set():
                self._stop.wait(self.interval_s)
                continue
            if not self._through_stall(beat, asked, own):
                return

    def _through_stall(self, beat: threading.Event, stalled_since: float, own: float) -> bool:
        """Watch a stalled loop until it turns again (False if told to stop first). One
        stall may hold several blocks: when an interrupted agent's task lets go, the loop
        may run another task that blocks before it gets to the heartbeat, so whichever
        task is running is timed from the moment it started to. A task is stopped when
        its own work (``own`` so far: see :mod:`agentflow_eval.run.thread_clock`), not the
        wall time, reaches the limit: a loop that stands still because the machine gives
        it no CPU is not blocked by its agent."""
        assert self._loop is not None
        running: asyncio.Task[Any] | None = None
        since = stalled_since
        caught: list[tuple[_Guard, float]] = []
        interrupted_at = 0.0  # ``own`` when the running guard was last interrupted
        first_interrupt = 0.0
        while not beat.is_set():
            task = asyncio.current_task(self._loop)
            now = time.monotonic()
            if task is not running:
                if running is not None:
                    since, own = now, 0.0
                running = task
            guard = self._guards.get(task) if task is not None else None
            if (
                guard is not None
                and guard.active
                and guard.block is None
                and own >= self.limit_s
                and not self._importing(guard)
            ):
                guard.block = LoopBlock(seconds=now - since, where=self._blocked_at(guard))
                self.blocks.append(guard.block)
                caught.append((guard, since))
                self._interrupt(guard)
                interrupted_at = first_interrupt = own
            elif guard is not None and guard.active and guard.block is not None:
                # interrupted, and still blocking: it caught the interruption
                if own - interrupted_at >= self.limit_s / 2:
                    self._interrupt(guard)
                    interrupted_at = own
                if (
                    self.abandon_after_s is not None
                    and self.on_unstoppable is not None
                    and not guard.abandoned
                    and own - first_interrupt >= self.abandon_after_s
                ):
                    guard.abandoned = True
                    guard.block.seconds = now - since
                    self.on_unstoppable(guard.block, guard.key)
            if self._stop.is_set():
                return False
            beat.wait(self.interval_s)
            own += self._clock.advance()
        ended = time.monotonic()
        for guard, started in caught:
            assert guard.block is not None
            guard.block.seconds = max(guard.block.seconds, ended - started)
            guard.block.ended = True
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._cancel_if_running, guard)
        return True

    def _importing(self, guard: _Guard) -> bool:
        """Whether the loop thread is importing a module: a first import may take seconds
        (LiteLLM's does), and stopping it halfway would leave the module broken for the
        whole process, so an import is never taken for a block."""
        frame = sys._current_frames().get(self._loop_thread or 0)
        return _in_import(frame, guard.frame)

    def _blocked_at(self, guard: _Guard) -> str:
        frame = sys._current_frames().get(self._loop_thread or 0)
        if frame is None:
            return ""
        innermost = _describe(frame)
        agent_frame: FrameType | None = None
        current: FrameType | None = frame
        while current is not None and current is not guard.frame:
            if not current.f_code.co_filename.startswith(_PACKAGE_DIR):
                agent_frame = current  # the outermost frame not ours: the agent's
            current = current.f_back
        if agent_frame is None or agent_frame is frame:
            return innermost
        return f"{_describe(agent_frame)}, at {innermost}"

    def _interrupt(self, guard: _Guard) -> None:
        if not self._signal_ready or INTERRUPT_SIGNAL is None or self._loop_thread is None:
            return
        guard.interrupt_pending = True
        with contextlib.suppress(ProcessLookupError, OSError):
            signal.pthread_kill(self._loop_thread, INTERRUPT_SIGNAL)

    # ------------------------------------------------------------------ the loop thread

    def _cancel_if_running(self, guard: _Guard) -> None:
        if guard.active and not guard.task.done():
            guard.task.cancel("the agent blocked the event loop")

    def _install_signal(self) -> Any:
        """Install the interrupting handler when the loop runs in the main thread and the
        signal is free; returns the handler it replaced."""
        self._signal_ready = False
        if INTERRUPT_SIGNAL is None or threading.current_thread() is not threading.main_thread():
            return None
        previous = signal.getsignal(INTERRUPT_SIGNAL)
        if previous not in (signal.SIG_DFL, None):
            return previous  # someone else's: leave it, detect and cancel only
        signal.signal(INTERRUPT_SIGNAL, self._on_signal)
        self._signal_ready = True
        return previous

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        """Runs in the main thread: raise :class:`EventLoopBlocked` if it is still inside
        the blocked trial's agent code, else do nothing."""
        for guard in list(self._guards.values()):
            if not (guard.active and guard.interrupt_pending and guard.block is not None):
                continue
            guard.interrupt_pending = False
            if _within(frame, guard.frame) and not _in_import(frame, guard.frame):
                guard.block.interrupted = True
                raise EventLoopBlocked(guard.block.where)


def _within(frame: FrameType | None, target: FrameType | None) -> bool:
    while frame is not None:
        if frame is target:
            return True
        frame = frame.f_back
    return False


def _in_import(frame: FrameType | None, stop_at: FrameType | None) -> bool:
    while frame is not None and frame is not stop_at:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _describe(frame: FrameType) -> str:
    code = frame.f_code
    filename = code.co_filename.rsplit("/", 1)[-1]
    return f"{code.co_name} ({filename}:{frame.f_lineno})"
