"""``end_state_match``: does the world look, when the trial is over, as the case says it must?

It judges a case's ``end_state`` checks (:mod:`agentflow_eval.models.end_state`) against
what the trial recorded before its environment was torn down (``Trial.end_state``): the
rows a query returned, a file's text or a JSON path's value, what a check function
returned, and, for a ``json_path`` alone, the value at that path in what the
environment captured (read now, so a later ``rejudge`` may add such checks). The agent's
words count for nothing here: "refunded" with no refund row fails.

The score is the share of checks that hold; the default threshold 1.0 passes a trial
only when every one does. Each check's expected and found values are in the verdict's
details, which the report shows side by side. A case without checks is skipped; a trial
that recorded no end state (its environment was never set up), or none for some check
(a check added after the trial ran), is not evaluated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentflow_eval.criteria.base import (
    CriterionContext,
    not_evaluated,
    scored,
    skipped,
    threshold_of,
)
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.end_state import EndStateCheck, json_path_value
from agentflow_eval.models.matching import matches
from agentflow_eval.models.results import CriterionResult, EndState

__all__ = ["EndStateCriterion", "EndStateOptions"]

_SHOWN = 200
"""Characters of a value shown in a verdict's reason."""


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


@dataclass(frozen=True)
class _Reading:
    """What one check found: its value, or why there is none."""

    found: Any = None
    error: str | None = None
    recorded: bool = True


def _reading(check: EndStateCheck, state: EndState) -> _Reading:
    if check.captured_only:
        try:
            return _Reading(found=json_path_value(check.json_path or "", state.captured))
        except Exception as exc:
            return _Reading(error=f"{type(exc).__name__}: {exc}")
    probe = state.probe(check.key)
    if probe is None:
        return _Reading(recorded=False)
    return _Reading(found=probe.found, error=probe.error)


@dataclass
class EndStateCriterion:
    """The case's end-state checks against what the trial found (see the module)."""

    name: str
    threshold: float = 1.0
    label: str = field(init=False, default="end state")

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        checks = ctx.case.end_state
        if not checks:
            return skipped(self, f"case {ctx.case.eval_id!r} gives no end_state checks")
        state = ctx.trial.end_state
        if state is None:
            why = (
                f"the trial recorded no end state ({ctx.trial.error.kind}: "
                f"{ctx.trial.error.message})"
                if ctx.trial.error is not None
                else "the trial recorded no end state"
            )
            return not_evaluated(self, why)
        rows: list[dict[str, Any]] = []
        unread: list[str] = []
        problems: list[str] = []
        for check in checks:
            reading = _reading(check, state)
            if not reading.recorded:
                unread.append(check.described)
                continue
            holds = reading.error is None and matches(check.match, check.expect, reading.found)
            row: dict[str, Any] = {
                "check": check.described,
                "holds": holds,
                "match": check.match,
                "expected": check.expect,
                "found": reading.found,
            }
            if reading.error is not None:
                row["error"] = reading.error
                problems.append(f"{check.described}: could not be read ({reading.error})")
            elif not holds:
                problems.append(
                    f"{check.described}: expected {_shown(check.expect)} ({check.match}), "
                    f"found {_shown(reading.found)}"
                )
            rows.append(row)
        details: dict[str, Any] = {"checks": rows}
        if unread:
            return not_evaluated(
                self,
                "the trial did not record what these checks read (were they added after it "
                f"ran?): {'; '.join(unread)}",
                details,
            )
        score = sum(row["holds"] for row in rows) / len(rows)
        return scored(self, score, details, reason="; ".join(problems) or None)


class EndStateOptions(CriterionOptions):
    """Options of end_state_match."""


@criterion(
    "end_state_match",
    EndStateOptions,
    judges=("end_state",),
    subject="end_state",
    judges_unasked=True,
)
def build_end_state(name: str, options: EndStateOptions, config: EvalConfig) -> EndStateCriterion:
    """What the world looks like when the trial is over against the case's end_state
    checks: a query's rows, a file's text or JSON value, what the environment captured,
    a check function's verdict (the share of checks that hold; default threshold 1.0)."""
    return EndStateCriterion(name=name, threshold=threshold_of(options, 1.0))
