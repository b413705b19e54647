"""Criterion means on both sides of a comparison, and their changes.

Descriptive only: a criterion's mean score moves with the pass rate it feeds, and the
tests are on the pass counts (:mod:`agentflow_eval.compare.exact`).
"""

from __future__ import annotations

from collections.abc import Iterable

from agentflow_eval.compare.models import CriterionChange
from agentflow_eval.models.results import CriterionSummary

__all__ = ["criterion_changes"]


def criterion_changes(
    baseline: Iterable[CriterionSummary], candidate: Iterable[CriterionSummary]
) -> list[CriterionChange]:
    """Mean scores of each criterion on both sides (baseline's order, then the
    candidate's new ones)."""
    before = {summary.criterion: summary for summary in baseline}
    after = {summary.criterion: summary for summary in candidate}
    changes = []
    for name in [*before, *(name for name in after if name not in before)]:
        old, new = before.get(name), after.get(name)
        old_mean = old.mean_score if old else None
        new_mean = new.mean_score if new else None
        changes.append(
            CriterionChange(
                criterion=name,
                label=(new.label if new else "") or (old.label if old else ""),
                baseline_mean=old_mean,
                candidate_mean=new_mean,
                change=new_mean - old_mean
                if old_mean is not None and new_mean is not None
                else None,
            )
        )
    return changes
