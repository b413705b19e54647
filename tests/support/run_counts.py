"""Run summaries built from pass counts alone, for comparison tests and simulations.

A :class:`~agentflow_eval.models.results.RunResult` whose cases carry the given counts
(and, optionally, criterion means and what each trial took), with no trials: what a
comparison reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from agentflow_eval.models.results import (
    CaseResult,
    CriterionSummary,
    RunResult,
    RunTotals,
    TrialFigures,
)

__all__ = ["Counts", "run_with_counts"]

START = datetime(2026, 11, 20, 2, 30, tzinfo=UTC)


@dataclass(frozen=True)
class Counts:
    """One case: ``passed`` of ``runs`` trials, ``infrastructure`` of them errored for
    infrastructure reasons (counted in ``runs``, as results.json counts them)."""

    case_id: str
    passed: int
    runs: int
    infrastructure: int = 0
    criteria: dict[str, float] = field(default_factory=dict)
    figures: Sequence[TrialFigures] = ()


def run_with_counts(
    cases: Sequence[Counts],
    *,
    run_id: str = "run",
    eval_set_id: str = "travel_agent_nightly",
    day: int = 0,
    runs_per_case: int | None = None,
) -> RunResult:
    """A run of ``cases`` (no trials), started ``day`` days after a fixed date."""
    results = []
    for case in cases:
        failed = case.runs - case.passed - case.infrastructure
        assert failed >= 0, case
        countable = case.runs - case.infrastructure
        results.append(
            CaseResult(
                case_id=case.case_id,
                label=f"label of {case.case_id}",
                runs=case.runs,
                passed=case.passed,
                failed=failed,
                errored=case.infrastructure,
                infrastructure_errors=case.infrastructure,
                not_evaluated=0,
                pass_rate=case.passed / countable if countable else 0.0,
                ci_low=0.0,
                ci_high=1.0,
                criteria=[
                    CriterionSummary(criterion=name, mean_score=mean)
                    for name, mean in case.criteria.items()
                ],
                trial_figures=list(case.figures),
            )
        )
    trials = sum(case.runs for case in cases)
    passed = sum(case.passed for case in cases)
    started = START + timedelta(days=day)
    return RunResult(
        run_id=run_id,
        eval_set_id=eval_set_id,
        agent="travel-assistant",
        runs_per_case=runs_per_case or max((case.runs for case in cases), default=1),
        started_at=started,
        finished_at=started + timedelta(minutes=5),
        duration_s=300.0,
        totals=RunTotals(
            cases=len(cases),
            trials=trials,
            passed=passed,
            failed=trials - passed,
            pass_rate=passed / trials if trials else 0.0,
        ),
        cases=results,
    )
