"""One trial of a component case: the component called with the case's input, under the
trial timeout, its output recorded as the trial's one turn (``output`` as returned, as
JSON; ``final_response`` as text), so criteria that compare an answer can judge it too.

No agent session takes part. Whatever the component does wrong is data: an exception or
a timeout is the trial's error, never raised (a synchronous component that hangs is
abandoned to its worker thread; see :mod:`agentflow_eval.agents.threads`).
"""

from __future__ import annotations

import asyncio
import time
import traceback
from datetime import UTC, datetime
from typing import Any

from agentflow_eval.agents.base import jsonable
from agentflow_eval.models.evalset import EvalCase, as_text
from agentflow_eval.models.results import MessageEvent, Trial, TrialError, Turn
from agentflow_eval.run.components import ComponentTarget
from agentflow_eval.run.trial import redacted

__all__ = ["run_component_trial"]

_TRACEBACK_LINES = 12


async def run_component_trial(
    target: ComponentTarget, case: EvalCase, trial_index: int, timeout_s: float
) -> Trial:
    """Call ``target`` once with ``case``'s input and return the trial (see the module)."""
    started_at = datetime.now(UTC)
    start = time.perf_counter()
    asked = case.conversation[0]
    turn = Turn(invocation_id=asked.invocation_id, user_text=asked.user_content.text)
    error: TrialError | None = None
    try:
        async with asyncio.timeout(timeout_s):
            output: Any = jsonable(await target.call(case))
    except TimeoutError:
        error = TrialError(
            kind="timeout",
            type="TimeoutError",
            message=f"component {target.spec!r} did not return within {timeout_s:g} s",
        )
    except Exception as exc:
        error = TrialError(
            kind="exception",
            type=type(exc).__name__,
            message=str(exc) or type(exc).__name__,
            traceback="".join(traceback.format_exception(exc)[-_TRACEBACK_LINES:]),
        )
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


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000
