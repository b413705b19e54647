"""Efficiency against the baseline: the per-case Mann–Whitney U test with Holm's
correction per measure, the paired overall ratio, tolerances and what gates, errored
trials and unknown costs, and A/A comparisons that call few false changes."""

from __future__ import annotations

import numpy as np
import pytest
from support.efficiency_sim import simulated_figures
from support.run_counts import Counts, run_with_counts

from agentflow_eval.compare import compare_runs
from agentflow_eval.compare.efficiency import CaseFigures, compare_efficiency, mann_whitney_u
from agentflow_eval.compare.models import CaseEfficiency, MeasureChange
from agentflow_eval.models.results import RunResult, TrialFigures
from agentflow_eval.models.tolerances import EfficiencyTolerances, parse_increase

ALPHA = 0.05


def _runs(
    seed: int,
    cases: int = 10,
    runs: int = 10,
    *,
    latency: dict[int, float] | None = None,
    tokens: dict[int, float] | None = None,
) -> tuple[RunResult, RunResult]:
    rng = np.random.default_rng(seed)
    latency, tokens = latency or {}, tokens or {}
    baseline = run_with_counts(
        [Counts(f"c{i}", runs, runs, figures=simulated_figures(rng, runs)) for i in range(cases)],
        run_id="base",
    )
    candidate = run_with_counts(
        [
            Counts(
                f"c{i}",
                runs,
                runs,
                figures=simulated_figures(
                    rng, runs, latency=latency.get(i, 1.0), tokens=tokens.get(i, 1.0)
                ),
            )
            for i in range(cases)
        ],
        run_id="cand",
        day=1,
    )
    return baseline, candidate


def _measure(efficiency: CaseEfficiency | None, measure: str) -> MeasureChange:
    assert efficiency is not None
    return next(change for change in efficiency.measures if change.measure == measure)


def test_a_planted_2x_latency_on_three_cases_is_found_and_named() -> None:
    # at 30 runs per case a doubled median is found nearly always (see
    # benchmarks/efficiency_power.py: at 10 runs, about a third of the time)
    baseline, candidate = _runs(8, runs=30, latency={1: 2.0, 4: 2.0, 8: 2.0})
    comparison = compare_runs(baseline, candidate, alpha=ALPHA, pairing="paired")
    slower = {
        case.case_id
        for case in comparison.cases
        if _measure(case.efficiency, "latency").verdict == "slower"
    }
    assert slower == {"c1", "c4", "c8"}
    change = _measure(comparison.cases[1].efficiency, "latency")
    assert change.test == "wilcoxon-signed-rank"
    assert change.p_adjusted is not None and change.p_value is not None
    assert change.p_adjusted <= ALPHA and change.p_adjusted >= change.p_value
    assert change.ratio is not None and 1.4 < change.ratio < 3.0
    assert comparison.efficiency is not None
    assert comparison.efficiency.test == "wilcoxon-signed-rank"
    assert comparison.pairing == comparison.efficiency.pairing == "paired"
    latency = next(o for o in comparison.efficiency.overall if o.measure == "latency")
    assert latency.paired_cases == 10 and latency.ratio is not None and latency.ratio > 1
    # reported, yet no tolerance was given: not a regression
    assert not comparison.regressed and comparison.overall.verdict == "no significant change"


def test_a_planted_token_increase_is_found() -> None:
    baseline, candidate = _runs(11, runs=20, tokens={2: 1.6})
    comparison = compare_runs(baseline, candidate, alpha=ALPHA)
    hungrier = [
        case.case_id
        for case in comparison.cases
        if _measure(case.efficiency, "tokens").verdict == "hungrier"
    ]
    assert hungrier == ["c2"]
    # tokens cost money: the same case is the costlier one
    assert _measure(comparison.cases[2].efficiency, "cost").verdict == "costlier"


def test_a_whole_run_twice_as_slow_is_slower_overall_with_a_possible_interval() -> None:
    baseline, candidate = _runs(3, cases=8, runs=5, latency={i: 2.0 for i in range(8)})
    efficiency = compare_runs(baseline, candidate, pairing="paired").efficiency
    assert efficiency is not None
    latency = next(o for o in efficiency.overall if o.measure == "latency")
    assert latency.verdict == "slower"
    assert latency.ci_low is not None and latency.ci_high is not None
    assert 1 < latency.ci_low < latency.ratio < latency.ci_high  # type: ignore[operator]
    assert latency.method.startswith("geometric mean")


def test_one_case_has_no_overall_interval() -> None:
    baseline, candidate = _runs(5, cases=1)
    efficiency = compare_runs(baseline, candidate).efficiency
    assert efficiency is not None
    latency = next(o for o in efficiency.overall if o.measure == "latency")
    assert latency.ratio is not None and latency.ci_low is None
    assert latency.note is not None and "no interval" in latency.note


@pytest.mark.parametrize(
    ("tolerance", "gated"), [(None, False), ("200%", False), ("50%", True), (0.5, True)]
)
def test_only_a_change_beyond_the_tolerance_is_a_regression(
    tolerance: str | float | None, gated: bool
) -> None:
    baseline, candidate = _runs(7, runs=30, latency={1: 2.0, 4: 2.0, 8: 2.0})
    tolerances = EfficiencyTolerances(max_latency_increase=parse_increase(tolerance))
    comparison = compare_runs(baseline, candidate, tolerances=tolerances, pairing="paired")
    assert comparison.efficiency is not None
    assert comparison.regressed is gated and comparison.efficiency.regressed is gated
    change = _measure(comparison.cases[1].efficiency, "latency")
    assert change.verdict == "slower"  # reported either way
    assert change.beyond_tolerance is gated


def test_a_tolerance_on_another_measure_does_not_gate_latency() -> None:
    baseline, candidate = _runs(7, runs=30, latency={1: 2.0, 4: 2.0, 8: 2.0})
    tolerances = EfficiencyTolerances.model_validate(
        {"max_cost_increase": "10%", "max_token_increase": "10%"}
    )
    assert not compare_runs(baseline, candidate, tolerances=tolerances).regressed


def test_aa_comparisons_flag_at_most_alpha_of_cases() -> None:
    rng = np.random.default_rng(2026)
    repetitions, cases, runs = 200, 10, 10
    flagged = {"cost": 0, "tokens": 0, "latency": 0, "tool_calls": 0}
    comparisons_flagged = dict.fromkeys(flagged, 0)
    for _ in range(repetitions):
        result = compare_efficiency(
            [
                CaseFigures(f"c{i}", simulated_figures(rng, runs), simulated_figures(rng, runs))
                for i in range(cases)
            ],
            ALPHA,
            EfficiencyTolerances(),
        )
        for measure in flagged:
            found = sum(
                _measure(efficiency, measure).verdict != "no significant change"
                for efficiency in result.cases.values()
            )
            flagged[measure] += found
            comparisons_flagged[measure] += found > 0
    for measure in flagged:
        assert flagged[measure] / (repetitions * cases) <= ALPHA, measure
        # Holm bounds the chance of even one false case per comparison at alpha
        assert comparisons_flagged[measure] / repetitions <= ALPHA + 0.03, measure


def _figures(latencies: list[float], **fields: object) -> list[TrialFigures]:
    return [
        TrialFigures(trial_index=i, latency_ms=latency, **fields)  # type: ignore[arg-type]
        for i, latency in enumerate(latencies)
    ]


def test_errored_trials_are_left_out_and_counted() -> None:
    fast = _figures([100.0, 110, 120, 130, 140])
    # the candidate's two timeouts would make it look slower: they are left out
    stalled = [*_figures([100.0, 110, 120]), *_figures([60_000.0, 60_000], errored=True)]
    result = compare_efficiency([CaseFigures("c", fast, stalled)], ALPHA, EfficiencyTolerances())
    efficiency = result.cases["c"]
    assert efficiency.errored_candidate == 2 and efficiency.errored_baseline == 0
    latency = _measure(efficiency, "latency")
    assert latency.candidate_trials == 3 and latency.candidate_median == 110.0
    assert latency.verdict == "no significant change"
    assert any("errored trials are left out" in note for note in result.comparison.notes)


def test_cost_is_not_tested_when_a_side_does_not_know_it() -> None:
    known = _figures([100.0, 110, 120], cost_usd=0.01)
    unknown = [*_figures([100.0, 110], cost_usd=0.01), *_figures([120.0])]
    result = compare_efficiency([CaseFigures("c", known, unknown)], ALPHA, EfficiencyTolerances())
    cost = _measure(result.cases["c"], "cost")
    assert cost.test is None and cost.p_value is None
    assert cost.note == "cost not tested: unknown for some trial of the candidate"
    assert _measure(result.cases["c"], "latency").test == "mann-whitney-u"
    overall_cost = next(o for o in result.comparison.overall if o.measure == "cost")
    assert overall_cost.paired_cases == 0


def test_too_few_finished_trials_are_not_tested() -> None:
    result = compare_efficiency(
        [CaseFigures("c", _figures([100.0]), _figures([300.0, 400]))], ALPHA, EfficiencyTolerances()
    )
    latency = _measure(result.cases["c"], "latency")
    assert latency.test is None and latency.note is not None and "fewer than 2" in latency.note


def test_a_rise_from_a_median_of_zero_is_beyond_any_tolerance() -> None:
    none = _figures([100.0] * 8, tool_calls=0)
    some = _figures([100.0] * 8, tool_calls=3)
    tolerances = EfficiencyTolerances(max_tool_call_increase=2.0)
    result = compare_efficiency([CaseFigures("c", none, some)], ALPHA, tolerances)
    calls = _measure(result.cases["c"], "tool_calls")
    assert calls.verdict == "chattier" and calls.ratio is None and calls.beyond_tolerance
    assert result.comparison.regressed


@pytest.mark.parametrize("seed", range(40))
def test_mann_whitney_u_is_scipys(seed: int) -> None:
    from scipy import stats

    rng = np.random.default_rng(seed)
    n_b, n_c = int(rng.integers(2, 25)), int(rng.integers(2, 25))
    if seed % 2:  # continuous: exact up to 8 a side, else normal
        baseline = [float(x) for x in rng.lognormal(0, 1, n_b)]
        candidate = [float(x) for x in rng.lognormal(rng.normal(0, 1), 1, n_c)]
    else:  # counts, with ties: normal with the tie correction
        baseline = [float(x) for x in rng.integers(0, 4, n_b)]
        candidate = [float(x) for x in rng.integers(0, 5, n_c)]
    expected = stats.mannwhitneyu(candidate, baseline, alternative="two-sided")
    p_value, superiority = mann_whitney_u(baseline, candidate)
    assert p_value == pytest.approx(float(expected.pvalue), rel=1e-9, abs=1e-12)
    assert superiority == pytest.approx(float(expected.statistic) / (n_b * n_c))


def test_mann_whitney_u_direction_and_identical_samples() -> None:
    p_value, superiority = mann_whitney_u([1.0, 2, 3, 4, 5], [6.0, 7, 8, 9, 10])
    assert superiority == 1.0 and p_value == pytest.approx(2 / 252)  # exact, no ties
    assert mann_whitney_u([3.0, 3, 3], [3.0, 3, 3]) == (1.0, 0.5)


def test_runs_without_trial_figures_say_so() -> None:
    baseline = run_with_counts([Counts("c0", 5, 5)])
    _, candidate = _runs(1, cases=1)
    comparison = compare_runs(baseline, candidate)
    assert comparison.efficiency is None and comparison.cases[0].efficiency is None
    assert any("without per-trial figures" in note for note in comparison.notes)


@pytest.mark.parametrize(
    ("text", "value"), [("10%", 0.1), (" 2.5 % ", 0.025), ("0.1", 0.1), (0.25, 0.25), ("", None)]
)
def test_tolerances_read_percentages_and_fractions(text: object, value: float | None) -> None:
    assert parse_increase(text) == pytest.approx(value) if value is not None else True
    assert (parse_increase(text) is None) is (value is None)


@pytest.mark.parametrize("text", ["10", "-5%", "ten", "nan%"])
def test_bad_tolerances_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=repr(text)):
        parse_increase(text)


def test_too_few_runs_for_any_case_to_show_is_said() -> None:
    baseline, candidate = _runs(8, cases=10, runs=5, latency={i: 2.0 for i in range(10)})
    efficiency = compare_runs(baseline, candidate).efficiency
    assert efficiency is not None
    (note,) = [note for note in efficiency.notes if "no single case can be called" in note]
    assert note.startswith("with 5 finished trials a side over 10 case(s)")
    assert "0.00794" in note
    many, more = _runs(8, cases=10, runs=20)
    efficiency = compare_runs(many, more).efficiency
    assert efficiency is not None
    assert not any("no single case" in note for note in efficiency.notes)


def test_runs_made_apart_call_no_latency_change_and_no_change_a_drift_explains() -> None:
    """Two runs made apart: even a whole run twice as slow is not called slower (a busy
    machine does that), the figures are shown and the note says how to measure it; a
    token change within the drift margin is not called, one beyond it is."""
    baseline, candidate = _runs(3, cases=8, runs=30, latency={i: 2.0 for i in range(8)})
    efficiency = compare_runs(baseline, candidate).efficiency
    assert efficiency is not None and efficiency.pairing == "apart"
    latency = next(o for o in efficiency.overall if o.measure == "latency")
    assert latency.verdict == "no significant change" and latency.ratio is not None
    assert latency.ratio > 1.5 and latency.note is not None and "--against" in latency.note
    assert any("latency is not called" in note for note in efficiency.notes)

    slight, more = _runs(11, runs=60, tokens={2: 1.15})
    tokens = _measure(compare_runs(slight, more).cases[2].efficiency, "tokens")
    assert tokens.p_adjusted is not None and tokens.p_adjusted <= ALPHA  # significant...
    assert tokens.verdict == "no significant change"  # ...yet within the drift margin
    assert tokens.note is not None and "within 25%" in tokens.note
    paired = compare_runs(slight, more, pairing="paired")
    assert _measure(paired.cases[2].efficiency, "tokens").verdict == "hungrier"
