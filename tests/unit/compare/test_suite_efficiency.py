"""A regression suite's summary lists each eval set's significant efficiency increases,
and one beyond the suite's tolerance is the eval set's regression."""

from __future__ import annotations

import numpy as np
import pytest
from support.efficiency_sim import simulated_figures
from support.run_counts import START, Counts, run_with_counts

from agentflow_eval.compare import compare_runs
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.compare.suite import EvalSetOutcome, outcome_of_published_run
from agentflow_eval.models.tolerances import EfficiencyTolerances
from agentflow_eval.report.suite_brief import outcome_line
from agentflow_eval.storage.history import RunEntry


def _outcome(tolerance: float | None) -> EvalSetOutcome:
    rng = np.random.default_rng(4)
    baseline = run_with_counts(
        [Counts(f"c{i}", 30, 30, figures=simulated_figures(rng, 30)) for i in range(3)]
    )
    candidate = run_with_counts(
        [
            Counts(f"c{i}", 30, 30, figures=simulated_figures(rng, 30, latency=3.0 if i else 1.0))
            for i in range(3)
        ],
        run_id="cand",
        day=1,
    )
    comparison = compare_runs(
        baseline,
        candidate,
        tolerances=EfficiencyTolerances(max_latency_increase=tolerance),
        pairing="paired",
    )
    entry = RunEntry(
        run_id="cand",
        folder="f",
        started_at=START,
        finished_at=START,
        published_at=START,
        agent="a",
        runs_per_case=30,
        cases=3,
        trials=90,
        passed=90,
        failed=0,
        errored=0,
        pass_rate=1.0,
        ci_low=0.9,
        ci_high=1.0,
    )
    return outcome_of_published_run(
        index=0,
        agent="a",
        entry=entry,
        eval_set_id=candidate.eval_set_id,
        eval_set_name="",
        record=RunComparison(baseline="latest", fail_on_regression=True, comparison=comparison),
        baseline="latest",
        report_url=None,
        flow_run=None,
        flow_run_state=None,
    )


@pytest.mark.parametrize(
    ("tolerance", "status"), [(None, "no significant change"), (0.5, "regression")]
)
def test_efficiency_in_the_suite_summary(tolerance: float | None, status: str) -> None:
    outcome = _outcome(tolerance)
    assert outcome.status == status and outcome.fails_gate is (status == "regression")
    slower = [f for f in outcome.efficiency if f.case_id is not None]
    assert [(f.case_id, f.measure, f.verdict) for f in slower] == [
        ("c1", "latency", "slower"),
        ("c2", "latency", "slower"),
    ]
    assert all(f.beyond_tolerance is (tolerance is not None) for f in slower)
    line = outcome_line(outcome)
    assert "c1 slower ×" in line and ("(beyond tolerance)" in line) is (tolerance is not None)
