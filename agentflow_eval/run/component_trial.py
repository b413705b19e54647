"""One trial of a component case: the component called with the case's input, under the
trial timeout, its output recorded as the trial's one turn (``output`` as returned, as
JSON; ``final_response`` as text), so criteria that compare an answer can judge it too.

No agent session takes part. Whatever the component does wrong is data: an exception, a
``SystemExit`` or ``KeyboardInterrupt`` it raises (as an agent's, see
:mod:`agentflow_eval.run.sigint`: a user's Ctrl-C still stops the run), or a timeout is
the trial's error, never raised (a synchronous component that hangs is
abandoned to its worker thread; see :mod:`agentflow_eval.agents.threads`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import traceback
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agentflow_eval.agents.base import jsonable
from agentflow_eval.models import defaults
from agentflow_eval.models.evalset import EvalCase, as_text
from agentflow_eval.models.results import MessageEvent, Trial, TrialError, Turn
from agentflow_eval.run.abandonable import Overran, run_abandonable
from agentflow_eval.run.components import ComponentTarget
from agentflow_eval.run.loop_watchdog import EventLoopBlocked, LoopBlock, LoopWatchdog
from agentflow_eval.run.sigint import SigintSeen
from agentflow_eval.run.trial import redacted

__all__ = ["run_component_trial"]

_TRACEBACK_LINES = 12


async def run_component_trial(
    target: ComponentTarget,
    case: EvalCase,
    trial_index: int,
    timeout_s: float,
    *,
    watchdog: LoopWatchdog | None = None,
    sigint: SigintSeen | None = None,
    grace_s: float = defaults.CANCEL_GRACE_S,
) -> Trial:
    """Call ``target`` once with ``case``'s input and return the trial (see the module).
    ``watchdog`` (running for the whole trial stage) stops an async component that blocks
    the event loop. A ``KeyboardInterrupt`` from a Ctrl-C ``sigint`` saw stops the run
    (without ``sigint`` every one does). A call that outlives its cancellation at the
    timeout by ``grace_s`` is abandoned (:mod:`agentflow_eval.run.abandonable`)."""
    started_at = datetime.now(UTC)
    start = time.perf_counter()
    asked = case.conversation[0]
    turn = Turn(invocation_id=asked.invocation_id, user_text=asked.user_content.text)
    error: TrialError | None = None
    guard = watchdog.guard() if watchdog is not None else contextlib.nullcontext(None)
    called = _Call()

    async def call() -> None:
        with guard as watched:
            try:
                called.output = jsonable(await target.call(case))
            except asyncio.CancelledError:
                if watched is None or watched.block is None:
                    raise
                _uncancel_own()  # the watchdog's cancellation, taken back
            except EventLoopBlocked:
                if watched is None or watched.block is None:
                    raise
            finally:
                called.block = watched.block if watched is not None else None

    try:
        try:
            await run_abandonable(call(), timeout_s=timeout_s, grace_s=grace_s)
        except Overran:
            if called.block is None:
                raise
        if called.block is not None:
            # however the call ended, it stalled every trial beside it
            raise _Blocked(called.block)
        output = called.output
    except _Blocked as blocked:
        error = TrialError(
            kind="timeout",
            type="EventLoopBlocked",
            message=f"component {target.spec!r} blocked the event loop for over "
            f"{min(blocked.block.seconds, timeout_s):.1f} s and was stopped: an async "
            "component must not make blocking calls; await them, or make it a plain "
            "function (it then runs in a worker thread)",
        )
    except Overran as overran:
        error = TrialError(
            kind="timeout",
            type="TimeoutError",
            message=f"component {target.spec!r} did not return within {timeout_s:g} s"
            f"{overran.abandonment}",
        )
    except TimeoutError:
        error = TrialError(
            kind="timeout",
            type="TimeoutError",
            message=f"component {target.spec!r} did not return within {timeout_s:g} s",
        )
    except KeyboardInterrupt as exc:
        if sigint is None or sigint.received:
            raise  # the user's Ctrl-C: the run stops
        error = _exception_error(exc)  # the component's own: its trial failed
    except (Exception, SystemExit) as exc:  # sys.exit in a component fails its trial only
        error = _exception_error(exc)
    else:
        turn.output = output
        turn.final_response = as_text(output)
        turn.events = [MessageEvent(text=turn.final_response, final=True, at_ms=_ms(start))]
    turn.latency_ms = _ms(start)
    trial = Trial(
        case_id=case.eval_id,
        trial_index=trial_index,
        turns=[turn],
        error=error,
        started_at=started_at,
        duration_ms=_ms(start),
    )
    return redacted(trial)


def _exception_error(exc: BaseException) -> TrialError:
    return TrialError(
        kind="exception",
        type=type(exc).__name__,
        message=str(exc) or type(exc).__name__,
        traceback="".join(traceback.format_exception(exc)[-_TRACEBACK_LINES:]),
    )


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


@dataclass
class _Call:
    """What the component's call left for its trial: its output, and how it blocked the
    event loop (if it did)."""

    output: Any = None
    block: LoopBlock | None = None


class _Blocked(Exception):
    """The component blocked the event loop (the watchdog's record of it)."""

    def __init__(self, block: LoopBlock) -> None:
        super().__init__(block.where)
        self.block = block


def _uncancel_own() -> None:
    """Take back the one cancellation the watchdog asked for; one from anyone else
    stands."""
    task = asyncio.current_task()
    if task is not None and task.uncancel() > 0:
        raise asyncio.CancelledError
