"""compare_runs: verdicts per case and overall, infrastructure errors, eval sets,
criteria, and the JSON a reader relies on."""

from __future__ import annotations

import json

import pytest
from support.run_counts import Counts, run_with_counts

from agentflow_eval.compare import Comparison, ComparisonError, compare_runs
from agentflow_eval.compare.exact import exact_test
from agentflow_eval.models.results import CriterionSummary


def test_verdicts_per_case() -> None:
    baseline = run_with_counts(
        [
            Counts("collapsed", 10, 10),
            Counts("recovered", 0, 10),
            Counts("steady", 7, 10),
            Counts("noisy", 5, 5),
            Counts("dropped_from_set", 3, 5),
        ],
        run_id="base",
    )
    candidate = run_with_counts(
        [
            Counts("collapsed", 0, 10),
            Counts("recovered", 10, 10),
            Counts("steady", 7, 10),
            Counts("noisy", 4, 5),
            Counts("new_case", 5, 5),
        ],
        run_id="cand",
        day=1,
    )
    comparison = compare_runs(baseline, candidate, alpha=0.05)
    cases = {case.case_id: case for case in comparison.cases}
    assert [case.case_id for case in comparison.cases] == [
        "collapsed",
        "recovered",
        "steady",
        "noisy",
        "dropped_from_set",
        "new_case",
    ]
    assert cases["collapsed"].verdict == "regression"
    assert cases["recovered"].verdict == "improvement"
    assert cases["steady"].verdict == "no significant change"
    assert cases["noisy"].verdict == "no significant change"  # 5/5 -> 4/5 is noise
    assert cases["dropped_from_set"].verdict == "removed"
    assert cases["new_case"].verdict == "added"
    assert cases["new_case"].baseline is None and cases["new_case"].candidate is not None
    # the p-value is the exact test's; four tested cases, Holm multiplies the smallest by 4
    collapsed = cases["collapsed"]
    assert collapsed.change == pytest.approx(-1.0)
    assert collapsed.p_value == pytest.approx(exact_test(10, 10, 0, 10).p_value)
    assert collapsed.p_adjusted is not None and collapsed.p_value is not None
    assert collapsed.p_adjusted >= collapsed.p_value and collapsed.test == "boschloo"
    assert comparison.regressed
    overall = comparison.overall
    assert overall.paired_cases == 4 and overall.added_cases == 1 and overall.removed_cases == 1
    assert overall.regressed_cases == 1 and overall.improved_cases == 1


def test_a_broad_slide_is_an_overall_regression_no_single_case_shows() -> None:
    # 30 cases each 5/5 -> 3/5: no case alone is significant, the paired change is
    baseline = run_with_counts([Counts(f"c{i}", 5, 5) for i in range(30)])
    candidate = run_with_counts([Counts(f"c{i}", 3 + i % 2, 5) for i in range(30)], run_id="c")
    comparison = compare_runs(baseline, candidate)
    assert all(case.verdict == "no significant change" for case in comparison.cases)
    overall = comparison.overall
    assert overall.verdict == "regression" and comparison.regressed
    assert overall.change == pytest.approx(-0.3)
    assert overall.ci_high is not None and overall.ci_high < 0


def test_no_change_at_all() -> None:
    run = run_with_counts([Counts(f"c{i}", i % 6, 5) for i in range(12)])
    comparison = compare_runs(run, run)
    assert comparison.overall.verdict == "no significant change" and not comparison.regressed
    assert comparison.overall.change == 0.0
    assert all(case.verdict == "no significant change" for case in comparison.cases)


def test_infrastructure_errors_are_left_out_on_both_sides() -> None:
    baseline = run_with_counts(
        [Counts("flaky_provider", 5, 5), Counts("down", 4, 5), Counts("other", 3, 5)]
    )
    candidate = run_with_counts(
        [
            Counts("flaky_provider", 2, 5, infrastructure=3),  # 2 of 2 countable trials
            Counts("down", 0, 5, infrastructure=5),  # nothing to count
            Counts("other", 3, 5),
        ],
        run_id="c",
    )
    comparison = compare_runs(baseline, candidate)
    cases = {case.case_id: case for case in comparison.cases}
    flaky = cases["flaky_provider"]
    assert flaky.candidate is not None
    assert (flaky.candidate.passed, flaky.candidate.runs) == (2, 2)
    assert flaky.candidate.infrastructure_errors == 3 and flaky.candidate.pass_rate == 1.0
    assert flaky.change == 0.0 and flaky.verdict == "no significant change"
    down = cases["down"]
    assert down.verdict == "no significant change" and down.p_value is None
    assert (
        down.note == "not tested: no countable trial in the candidate (5 infrastructure error(s))"
    )
    assert comparison.overall.paired_cases == 2
    assert any("left out: 0 in the baseline, 8 in the candidate" in n for n in comparison.notes)
    assert any("1 case(s) in both runs not tested" in n for n in comparison.notes)


def test_different_eval_sets_are_refused_unless_allowed() -> None:
    baseline = run_with_counts([Counts("a", 5, 5)], eval_set_id="travel")
    candidate = run_with_counts([Counts("a", 5, 5)], eval_set_id="hotels", run_id="c")
    with pytest.raises(ComparisonError, match="different eval sets: the baseline ran 'travel'"):
        compare_runs(baseline, candidate)
    allowed = compare_runs(baseline, candidate, allow_different_eval_sets=True)
    assert allowed.notes[0].startswith("different eval sets (travel → hotels)")


def test_one_case_in_common_takes_its_exact_test() -> None:
    baseline = run_with_counts([Counts("only", 10, 10)])
    candidate = run_with_counts([Counts("only", 0, 10)], run_id="c")
    overall = compare_runs(baseline, candidate).overall
    assert overall.verdict == "regression" and overall.ci_low is None
    assert overall.note == "one case in common: the overall verdict is its exact test"


def test_nothing_in_common() -> None:
    baseline = run_with_counts([Counts("a", 5, 5)])
    candidate = run_with_counts([Counts("b", 5, 5)], run_id="c")
    comparison = compare_runs(baseline, candidate)
    assert comparison.overall.verdict == "no significant change"
    assert comparison.overall.paired_cases == 0 and comparison.power is None
    assert [case.verdict for case in comparison.cases] == ["removed", "added"]


def test_criterion_means_and_their_changes() -> None:
    baseline = run_with_counts(
        [Counts("a", 5, 5, criteria={"tool_trajectory_avg_score": 1.0, "safety_v1": 0.9})]
    )
    candidate = run_with_counts(
        [Counts("a", 3, 5, criteria={"tool_trajectory_avg_score": 0.6, "new_judge": 0.5})],
        run_id="c",
    )
    baseline.criteria = [CriterionSummary(criterion="tool_trajectory_avg_score", mean_score=1.0)]
    candidate.criteria = [CriterionSummary(criterion="tool_trajectory_avg_score", mean_score=0.6)]
    comparison = compare_runs(baseline, candidate)
    [run_level] = comparison.criteria
    assert run_level.change == pytest.approx(-0.4)
    per_case = {change.criterion: change for change in comparison.cases[0].criteria}
    assert list(per_case) == ["tool_trajectory_avg_score", "safety_v1", "new_judge"]
    assert per_case["tool_trajectory_avg_score"].change == pytest.approx(-0.4)
    assert per_case["safety_v1"].candidate_mean is None and per_case["safety_v1"].change is None
    assert per_case["new_judge"].baseline_mean is None


def test_power_summary_for_the_runs_used() -> None:
    run = run_with_counts([Counts(f"c{i}", 5, 5) for i in range(10)])
    power = compare_runs(run, run, detect_drop=0.3).power
    assert power is not None
    assert (power.runs_baseline, power.runs_candidate, power.cases_tested) == (5, 5, 10)
    assert power.reference_pass_rate == 1.0 and power.level == pytest.approx(0.05 / 20)
    assert power.test == "boschloo" and power.method == "exact"
    # at 5 runs and level 0.0025 only 5/5 -> 0/5 is flagged: (1 - p_c)^5 >= 0.8
    assert power.minimum_detectable_drop == pytest.approx(0.8 ** (1 / 5), abs=1e-4)
    assert power.runs_needed is not None and power.runs_needed > 5
    assert power.detect_drop == 0.3


def test_inconsistent_counts_and_bad_parameters() -> None:
    good = run_with_counts([Counts("a", 5, 5)])
    bad = run_with_counts([Counts("a", 5, 5)], run_id="c")
    bad.cases[0].infrastructure_errors = 6
    with pytest.raises(ComparisonError, match="candidate: case 'a': inconsistent counts"):
        compare_runs(good, bad)
    twice = run_with_counts([Counts("a", 5, 5), Counts("a", 4, 5)])
    with pytest.raises(ComparisonError, match="appears twice"):
        compare_runs(good, twice)
    with pytest.raises(ComparisonError, match="alpha"):
        compare_runs(good, good, alpha=0)
    with pytest.raises(ComparisonError, match="drop"):
        compare_runs(good, good, detect_drop=1.5)


def test_json_field_names() -> None:
    baseline = run_with_counts([Counts("a", 10, 10), Counts("b", 5, 10)])
    candidate = run_with_counts([Counts("a", 0, 10), Counts("c", 5, 10)], run_id="c")
    document = json.loads(compare_runs(baseline, candidate).model_dump_json())
    assert document["comparison_version"] == "1.4"
    assert document["overall"]["verdict"] == "regression"
    assert [(c["case_id"], c["verdict"]) for c in document["cases"]] == [
        ("a", "regression"),
        ("b", "removed"),
        ("c", "added"),
    ]
    assert document["regressed"] is True
    assert Comparison.model_validate(document).overall.verdict == "regression"


def test_power_line_wording() -> None:
    from agentflow_eval.compare import format_power

    run = run_with_counts([Counts(f"c{i}", 9, 10) for i in range(4)])
    power = compare_runs(run, run).power
    assert power is not None
    line = format_power(power)
    assert line.startswith("Power (80%, Holm over 4 cases: one-sided level 0.0063) with 10 runs")
    assert "a case at the baseline's mean pass rate (90.0%) is flagged once it drops by " in line
    assert "pts if it were the only case" in line and "a case that always passed" in line
    assert "A 20-pt drop from 90.0% needs" in line
    low = run_with_counts([Counts("c", 1, 10)])
    low_power = compare_runs(low, low).power
    assert low_power is not None
    assert "is not flagged even if it drops to 0%" in format_power(low_power)
    assert "A 20-pt drop from 10.0% is not possible." in format_power(low_power)


def test_trials_without_a_verdict_are_left_out_of_both_sides_counts() -> None:
    """A judge that never answered leaves trials without a verdict: they are not the
    agent's failures, so a broken judge does not read as a regression."""
    from agentflow_eval.compare.comparison import _counts
    from agentflow_eval.models.results import CaseResult

    case = CaseResult(
        case_id="c",
        label="x",
        runs=6,
        passed=2,
        failed=0,
        errored=0,
        not_evaluated=4,
        rated_runs=2,
        pass_rate=1.0,
        ci_low=0.0,
        ci_high=1.0,
    )
    counts = _counts(case, "candidate")
    assert (counts.passed, counts.runs, counts.not_evaluated, counts.pass_rate) == (2, 2, 4, 1.0)
