"""``final_session_state_match``: is the agent's session state, when the trial ended, the
case's ``final_session_state``?

``state_match: exact`` (the default) wants the same keys with equal values; ``subset``
wants the expected keys with equal values and lets the agent keep other keys too. Keys
are compared at the top level, values as whole JSON values. The score is the fraction of
keys that agree (for ``exact``, over the keys of both sides), so the mean over trials says
how close the agent came; the default threshold 1.0 passes only a full match.

A case whose ``final_session_state`` is absent or empty is skipped: Google ADK writes
``{}`` when nothing is expected. An agent whose sessions keep no state this package can
see (an OpenAI-shaped HTTP agent) gets "not evaluated", never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import WithJsonSchema, field_validator

from agentflow_eval.criteria.base import (
    CriterionContext,
    not_evaluated,
    scored,
    skipped,
    threshold_of,
)
from agentflow_eval.criteria.options import CriterionOptions, lower_case
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import CriterionResult

__all__ = ["FinalSessionStateCriterion", "SessionStateOptions", "StateMatch", "compare_states"]

StateMatch = Literal["exact", "subset"]

_MISSING = object()


def compare_states(
    expected: dict[str, Any], actual: dict[str, Any], mode: StateMatch
) -> dict[str, list[str]]:
    """Which keys agree, which expected keys are missing or differ, and (``exact``) which
    keys the agent has that were not expected."""
    keys = list(expected) + ([k for k in actual if k not in expected] if mode == "exact" else [])
    report: dict[str, list[str]] = {"matched": [], "missing": [], "different": [], "unexpected": []}
    for key in keys:
        want, got = expected.get(key, _MISSING), actual.get(key, _MISSING)
        if want is _MISSING:
            report["unexpected"].append(key)
        elif got is _MISSING:
            report["missing"].append(key)
        elif want == got:
            report["matched"].append(key)
        else:
            report["different"].append(key)
    return report


@dataclass
class FinalSessionStateCriterion:
    """Compares the trial's final session state with the case's expected one."""

    name: str
    threshold: float
    mode: StateMatch = "exact"
    label: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.label = f"final session state ({self.mode})"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        expected = ctx.case.final_session_state
        if not expected:
            return skipped(self, f"case {ctx.case.eval_id!r} gives no final_session_state")
        actual = ctx.trial.final_session_state
        if actual is None:
            return not_evaluated(
                self,
                "the agent's sessions expose no state to compare (a Python or LiteLLM agent's "
                "state dict, or a simple-shape HTTP agent's returned state)",
            )
        report = compare_states(expected, actual, self.mode)
        total = sum(len(keys) for keys in report.values())
        score = len(report["matched"]) / total if total else 1.0
        problems = [
            f"{what}: {', '.join(report[what])}"
            for what in ("missing", "different", "unexpected")
            if report[what]
        ]
        details = {
            "mode": self.mode,
            "expected": expected,
            "actual": actual,
            **report,
        }
        return scored(self, score, details, reason="; ".join(problems) or None)


class SessionStateOptions(CriterionOptions):
    """Options of final_session_state_match."""

    state_match: Annotated[
        StateMatch, WithJsonSchema({"enum": ["exact", "subset", "EXACT", "SUBSET"]})
    ] = "exact"
    """How the session's final state is compared: exact, or subset (the expected keys
    with equal values; other keys allowed)."""

    @field_validator("state_match", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return lower_case(value)


@criterion(
    "final_session_state_match",
    SessionStateOptions,
    judges=("final_session_state",),
    subject="session_state",
)
def build_final_session_state(
    name: str, options: SessionStateOptions, config: EvalConfig
) -> FinalSessionStateCriterion:
    """The agent's session state when the trial ended against the case's
    final_session_state (default threshold 1.0)."""
    return FinalSessionStateCriterion(
        name=name, threshold=threshold_of(options, 1.0), mode=options.state_match
    )
