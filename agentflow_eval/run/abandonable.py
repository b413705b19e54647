"""Awaiting an agent's code under a timeout it cannot refuse.

``asyncio.timeout`` and a task's ``cancel()`` only *ask* a coroutine to stop: they throw
``CancelledError`` in where it waits. An agent that catches it (``except BaseException:
pass`` around an ``await``, in a loop) and awaits again would hold whatever awaits it for
ever — its trial, the trial stage, the run's deadline, a Ctrl-C — and one that catches it
once and answers later would be taken for an answer.

:func:`run_abandonable` awaits the agent's coroutine in a task of its own, which it
drives through a :class:`_Leash` (a step at a time, as ``await`` would), and waits on
that task rather than inside it:

- the work ends within ``timeout_s``: its result, or its exception raised here (a
  ``KeyboardInterrupt`` or ``SystemExit`` too: they never escape the work's task, where
  they would end the event loop);
- ``timeout_s`` passes: the task is cancelled, and :class:`Overran` is raised once the
  work has ended — however it ended: an answer given after the timeout is not taken — or
  once ``grace_s`` more has passed without that. Then the work is **abandoned**: the
  cancellation is put to its coroutine once more (so that what it waits in unwinds, as
  on any cancellation) and, whatever it awaits next, it is never resumed again: its task
  ends at once and its coroutine stays suspended where it stopped (kept for the life of
  the process: closing it would run its code again, and with no loop running, an agent
  that catches everything can loop for ever in its ``finally``);
- the caller is cancelled (the run's deadline, a Ctrl-C): the task is cancelled too, and
  the caller's ``CancelledError`` goes on once the work has ended, or after ``grace_s``,
  the work abandoned.

So nothing waits on an agent for longer than its timeout and the grace. The agent's code
keeps its event loop (the one the trials, the model client and the loop watchdog share)
rather than a thread of its own: an agent's clients stay on one loop for the whole run,
and an agent that blocks the loop is still the watchdog's
(:mod:`agentflow_eval.run.loop_watchdog`). What an abandoned agent holds where it
stopped (a connection; a slot of a model's concurrency limit, if it stopped inside a
model call it started after its last cancellation) stays held, and the tasks it started
itself are its own: they are cancelled like any task, not abandoned.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Generator
from typing import Any, Generic, TypeVar

__all__ = ["Overran", "run_abandonable"]

T = TypeVar("T")


class Overran(TimeoutError):
    """The work was still going at its timeout; ``abandoned`` when it was still going
    ``grace_s`` after its cancellation too."""

    def __init__(self, timeout_s: float, grace_s: float, *, abandoned: bool) -> None:
        super().__init__(f"did not finish within {timeout_s:g} s{_abandoned(grace_s, abandoned)}")
        self.timeout_s = timeout_s
        self.grace_s = grace_s
        self.abandoned = abandoned

    @property
    def abandonment(self) -> str:
        """``; it ignored its cancellation ... and was abandoned``, or nothing."""
        return _abandoned(self.grace_s, self.abandoned)


def _abandoned(grace_s: float, abandoned: bool) -> str:
    if not abandoned:
        return ""
    return f"; it ignored its cancellation for {grace_s:g} s more and was abandoned"


async def run_abandonable(
    work: Coroutine[Any, Any, T], *, timeout_s: float | None, grace_s: float
) -> T:
    """``await work`` under ``timeout_s`` (``None``: no timeout of its own), abandoning it
    when it outlives its cancellation by ``grace_s`` (see the module). Raises
    :class:`Overran` past the timeout."""
    leash = _Leash(work)
    started = asyncio.Event()
    task = asyncio.create_task(_outcome_of(leash, started), name="agentflow agent code")
    try:
        # the timeout runs from the work's first step, as it would for ``await work``:
        # time other tasks held the loop before then is not the work's
        await started.wait()
        finished, _ = await asyncio.wait({task}, timeout=timeout_s)
    except asyncio.CancelledError:
        await _stop(task, leash, grace_s)
        if not started.is_set():  # cancelled before it ever ran
            work.close()
        raise
    if not finished:
        ended = await _stop(task, leash, grace_s)
        raise Overran(timeout_s or 0.0, grace_s, abandoned=not ended)
    if task.cancelled():  # nobody here cancelled it: its own code did
        raise RuntimeError("the agent's code cancelled its own task")
    ok, value = task.result()
    if ok:
        result: T = value
        return result
    raise value


async def _outcome_of(leash: _Leash[T], started: asyncio.Event) -> tuple[bool, Any]:
    """The work's result or exception, as data: an exception escaping a task's step is
    re-raised out of the event loop when it is a ``KeyboardInterrupt`` or ``SystemExit``."""
    started.set()
    try:
        return True, await leash
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # handed to the caller, whatever it is
        return False, exc


async def _stop(task: asyncio.Task[Any], leash: _Leash[Any], grace_s: float) -> bool:
    """Cancel ``task`` and wait up to ``grace_s`` for it to end; abandon it if it has not.
    Whether it ended. A cancellation of the caller meanwhile ends the wait (the work
    abandoned if still going) and is raised."""
    task.cancel()
    interrupted: asyncio.CancelledError | None = None
    try:
        await asyncio.wait({task}, timeout=grace_s)
    except asyncio.CancelledError as exc:
        interrupted = exc
    ended = task.done()
    if not ended:
        leash.let_go()
        task.cancel()  # wakes it: the leash puts the cancellation in once more, and ends it
        _ABANDONED.add(task)
        task.add_done_callback(_ABANDONED.discard)
    if interrupted is not None:
        raise interrupted
    return ended


_ABANDONED: set[asyncio.Task[Any]] = set()
"""Abandoned works whose task has not ended yet (a loop references its tasks weakly)."""


class _Leash(Generic[T]):
    """Drives a coroutine as ``await`` would — each value it yields goes to the task, each
    value or exception the task sends goes back in — until :meth:`let_go`: from then on,
    the next thing the task sends (the cancellation that wakes it) goes in once more, and
    then the coroutine is never resumed again and the task's await of the leash ends with
    ``CancelledError``."""

    def __init__(self, coroutine: Coroutine[Any, Any, T]) -> None:
        self._coroutine = coroutine
        self._let_go = False

    def let_go(self) -> None:
        self._let_go = True

    def __await__(self) -> Generator[Any, Any, T]:
        coroutine = self._coroutine
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                yielded = coroutine.send(value) if error is None else coroutine.throw(error)
            except StopIteration as stop:
                result: T = stop.value
                return result
            if self._let_go:
                _keep_for_good(coroutine)
                raise asyncio.CancelledError("abandoned: it ignored its cancellation")
            value, error = None, None
            try:
                value = yield yielded
            except GeneratorExit:  # the task itself is being freed: run no more of it
                _keep_for_good(coroutine)
                raise
            except BaseException as exc:  # the task's cancellation, put into the coroutine
                error = exc


def _keep_for_good(coroutine: Coroutine[Any, Any, Any]) -> None:
    """Keep an abandoned coroutine referenced until the process ends, even through the
    interpreter's shutdown (which clears modules, but never a daemon thread's frame): a
    coroutine that is freed is closed, and closing runs its code again."""
    with _KEEPER_LOCK:
        if not _KEPT:
            threading.Thread(
                target=_hold, args=(_KEPT,), name="agentflow abandoned agents", daemon=True
            ).start()
        _KEPT.append(coroutine)


def _hold(kept: list[Coroutine[Any, Any, Any]]) -> None:
    threading.Event().wait()  # for good: its frame holds ``kept``


_KEPT: list[Coroutine[Any, Any, Any]] = []
_KEEPER_LOCK = threading.Lock()
