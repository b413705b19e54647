"""How firmly a judged trial passed: its pass as a number in [0, 1].

A deterministic verdict is firm: 1 passed, 0 failed. An LLM judge that takes several
samples may split on a trial (2 of 3 votes for a pass); asked again, it could decide
the other way. Such a trial counts only as firmly as the judge gives it: a pass by a
split judge counts its share of votes that agree with the verdict, a failure that rests
on a split judge alone counts one minus its share. The firmness of a judged verdict is,
over the turns the judge was asked about, the smallest share of votes agreeing with the
row's majority.

A trial that is no verdict on the agent has none (``None``): the provider failed it
(an infrastructure error), or no criterion could judge it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from agentflow_eval.models.results import CriterionResult, TrialResult

__all__ = ["judge_firmness", "pass_value"]


def judge_firmness(criterion: CriterionResult) -> float:
    """The share of a judge's votes that agree with its verdicts (1 for a criterion that
    took no votes, or whose votes all agreed)."""
    firmness = 1.0
    for row in criterion.details.get("invocations", []) or []:
        votes = row.get("votes") if isinstance(row, dict) else None
        verdicts = [_verdict(vote) for vote in votes or []]
        if len(verdicts) > 1:
            firmness = min(firmness, max(Counter(verdicts).values()) / len(verdicts))
    return firmness


def _verdict(vote: Any) -> str:
    return str(vote.get("verdict")) if isinstance(vote, dict) else str(vote)


def pass_value(result: TrialResult) -> float | None:
    """How firmly ``result`` passed (see the module)."""
    error = result.trial.error
    if error is not None:
        return None if error.kind == "infrastructure" else 0.0
    if result.status == "not_evaluated":
        return None
    judged = [c for c in result.criteria if c.status in ("passed", "failed")]
    if result.status == "passed":
        return min((judge_firmness(c) for c in judged), default=1.0)
    failed = [c for c in judged if c.status == "failed"]
    firmest = max((judge_firmness(c) for c in failed), default=1.0)
    return 1.0 - firmest
