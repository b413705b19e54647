"""Worker threads for synchronous agent functions, which a hung agent cannot exhaust and
which never keep the process alive.

``asyncio.to_thread`` runs work in the event loop's default executor: a fixed number of
non-daemon threads that the interpreter waits for at exit. A synchronous agent that hangs
there holds its thread past the trial's timeout (Python cannot stop a thread), so a few
hung calls fill the executor — every later trial then waits for a thread and times out —
and the process never exits. :class:`AgentThreads` differs in two ways:

- its threads are daemon threads: nothing waits for them at exit;
- a call whose caller gave up (the trial timed out, the run was cancelled) is
  *abandoned*: its thread no longer counts against the pool, which starts another for
  the next call. The abandoned thread ends once the call returns, if it ever does.

The pool keeps one thread per call in flight — one per trial running the agent, so the
run's concurrency bounds it — and reuses idle threads between turns; a thread idle for
:data:`IDLE_TIMEOUT_S` ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["IDLE_TIMEOUT_S", "AgentThreads", "ThreadStats"]

IDLE_TIMEOUT_S = 30.0
"""Seconds an idle worker waits for another call before it ends."""


@dataclass
class ThreadStats:
    """What a pool has done: threads started, calls abandoned while running, and
    abandoned threads still inside their call."""

    started: int = 0
    abandoned: int = 0
    stuck: int = 0


@dataclass(eq=False)
class _Call:
    fn: Callable[[], Any]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    running: bool = False
    abandoned: bool = False
    done: bool = False


@dataclass(eq=False)
class AgentThreads:
    """Daemon worker threads for blocking calls (see the module doc)::

    threads = AgentThreads(name="agent 'weather'")
    answer = await threads.run(agent_fn, "hello")
    """

    name: str = "agent"
    idle_timeout_s: float = IDLE_TIMEOUT_S
    stats: ThreadStats = field(default_factory=ThreadStats)
    _queue: deque[_Call] = field(default_factory=deque, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _ready: threading.Condition = field(init=False, repr=False)
    _live: int = field(default=0, init=False)
    _idle: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._ready = threading.Condition(self._lock)

    @property
    def live_threads(self) -> int:
        """Threads that count against the pool: idle, or in a call not abandoned."""
        with self._lock:
            return self._live

    async def run(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` in a worker thread, in a copy of the caller's context
        (as ``asyncio.to_thread`` does). Cancelling the caller abandons the call."""
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        call = _Call(
            fn=lambda: context.run(fn, *args, **kwargs),
            loop=loop,
            future=loop.create_future(),
        )
        with self._lock:
            self._queue.append(call)
            self._spawn_if_needed()
            self._ready.notify()
        try:
            return await call.future
        except asyncio.CancelledError:
            self._abandon(call)
            raise

    def _spawn_if_needed(self) -> None:
        """Start a worker when more calls wait than idle workers can take (lock held)."""
        if len(self._queue) > self._idle:
            self._live += 1
            self.stats.started += 1
            thread = threading.Thread(
                target=self._work, name=f"agentflow {self.name} #{self.stats.started}", daemon=True
            )
            thread.start()

    def _abandon(self, call: _Call) -> None:
        with self._lock:
            if call.done or call.abandoned:
                return
            call.abandoned = True
            if call.running:  # its thread stays inside the call: it stops counting
                self._live -= 1
                self.stats.abandoned += 1
                self.stats.stuck += 1
                self._spawn_if_needed()

    def _work(self) -> None:
        while True:
            with self._lock:
                call = self._next_call()
                if call is None:
                    self._live -= 1
                    return
                call.running = True
            try:
                outcome: tuple[bool, Any] = (True, call.fn())
            except BaseException as exc:  # handed to the caller, whatever it is
                outcome = (False, exc)
            with self._lock:
                call.done = True
                abandoned = call.abandoned
                if abandoned:
                    self.stats.stuck -= 1
            if abandoned:
                return  # its place in the pool was given to another thread
            _deliver(call, outcome)

    def _next_call(self) -> _Call | None:
        """The next call not abandoned before it started, waiting up to the idle timeout
        (lock held); ``None`` when none came."""
        while True:
            while not self._queue:
                self._idle += 1
                woke = self._ready.wait(timeout=self.idle_timeout_s)
                self._idle -= 1
                if not woke and not self._queue:
                    return None
            call = self._queue.popleft()
            if not call.abandoned:
                return call


def _deliver(call: _Call, outcome: tuple[bool, Any]) -> None:
    def settle() -> None:
        if call.future.done():
            return
        ok, value = outcome
        if ok:
            call.future.set_result(value)
        else:
            call.future.set_exception(value)

    with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
        call.loop.call_soon_threadsafe(settle)
