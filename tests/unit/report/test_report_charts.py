"""Chart geometry: bins, thresholds, layouts."""

from __future__ import annotations

from datetime import UTC, datetime

from agentflow_eval.models.results import CaseResult, CriterionResult, Trial, TrialResult
from agentflow_eval.report.charts import case_state, pass_rate_chart, score_histograms


def case(case_id: str, passed: int, runs: int = 5) -> CaseResult:
    return CaseResult(
        case_id=case_id,
        label="",
        runs=runs,
        passed=passed,
        failed=runs - passed,
        errored=0,
        not_evaluated=0,
        pass_rate=passed / runs if runs else 0.0,
        ci_low=0.1,
        ci_high=0.9,
    )


def trial_with(*scores: tuple[float | None, str]) -> TrialResult:
    trial = Trial(case_id="c", trial_index=0, started_at=datetime(2026, 1, 1, tzinfo=UTC))
    verdicts = [
        CriterionResult(criterion="traj", status=status, score=score, threshold=1.0)  # type: ignore[arg-type]
        for score, status in scores
    ]
    return TrialResult(trial=trial, criteria=verdicts, status="failed")


def test_case_state() -> None:
    assert case_state(case("a", 5)) == "passing"
    assert case_state(case("a", 0)) == "failing"
    assert case_state(case("a", 2)) == "flaky"
    assert case_state(case("a", 0, runs=0)) == "empty"


def test_a_perfect_score_has_its_own_bin_and_the_threshold_marks_what_fails() -> None:
    trials = [
        trial_with((1.0, "passed")),
        trial_with((0.95, "failed")),
        trial_with((0.0, "failed")),
        trial_with((None, "not_evaluated")),
        trial_with((0.5, "skipped")),
    ]
    (hist,) = score_histograms(trials)
    counts = [b.count for b in hist.bins]
    assert len(counts) == 11 and hist.total == 3
    assert counts[10] == 1 and counts[9] == 1 and counts[0] == 1
    assert [b.below for b in hist.bins] == [True] * 10 + [False]
    assert hist.threshold_x == hist.bins[10].x - 1  # the line sits where 1.0 begins


def test_few_cases_get_labelled_bars_in_eval_set_order() -> None:
    chart = pass_rate_chart([case("b", 5), case("a", 1)])
    assert chart.horizontal
    assert [b.label for b in chart.bars] == ["b", "a"]
    assert chart.bars[0].width == chart.plot_width and chart.bars[1].width < chart.plot_width


def test_many_cases_get_columns_sorted_worst_first() -> None:
    cases = [case(f"c{i:02d}", i % 6) for i in range(40)]
    chart = pass_rate_chart(cases)
    assert not chart.horizontal and len(chart.bars) == 40
    rates = [b.height for b in chart.bars]
    assert rates == sorted(rates)
    assert all(b.x + b.width <= chart.plot_x + chart.plot_width + 0.01 for b in chart.bars)
