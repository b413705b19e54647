"""Simulated comparisons (fixed seeds, so the figures are deterministic): A/A comparisons
call few false regressions, and a planted drop is found about as often as the power
figure predicts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from support.run_counts import Counts, run_with_counts

from agentflow_eval.compare import compare_runs
from agentflow_eval.compare.power import regression_power
from agentflow_eval.models.results import RunResult

ALPHA = 0.05
REPETITIONS = 400


def _side(rng: np.random.Generator, rates: Sequence[float], runs: int, run_id: str) -> RunResult:
    return run_with_counts(
        [
            Counts(f"case_{i:02d}", int(rng.binomial(runs, rate)), runs)
            for i, rate in enumerate(rates)
        ],
        run_id=run_id,
    )


@dataclass
class Tally:
    comparisons: int = 0
    case_tests: int = 0
    false_case_regressions: int = 0
    comparisons_with_a_false_case: int = 0
    false_overall_regressions: int = 0


def _aa(rates: Sequence[float], runs: int, seed: int) -> Tally:
    rng = np.random.default_rng(seed)
    tally = Tally()
    for repetition in range(REPETITIONS):
        baseline = _side(rng, rates, runs, f"b{repetition}")
        candidate = _side(rng, rates, runs, f"c{repetition}")
        comparison = compare_runs(baseline, candidate, alpha=ALPHA)
        regressed = sum(case.verdict == "regression" for case in comparison.cases)
        tally.comparisons += 1
        tally.case_tests += len(comparison.cases)
        tally.false_case_regressions += regressed
        tally.comparisons_with_a_false_case += regressed > 0
        tally.false_overall_regressions += comparison.overall.verdict == "regression"
    return tally


def _assert_at_most_alpha(tally: Tally) -> None:
    per_case = tally.false_case_regressions / tally.case_tests
    family = tally.comparisons_with_a_false_case / tally.comparisons
    overall = tally.false_overall_regressions / tally.comparisons
    assert per_case <= ALPHA, per_case
    assert family <= ALPHA, family  # Holm: any false regression in a comparison
    assert overall <= ALPHA, overall


def test_aa_many_cases_few_runs() -> None:
    # 20 cases of varied difficulty, 5 runs each: the nightly run of a typical team
    rates = [1.0, 0.95, 0.9, 0.8, 0.6, 0.5, 0.3, 0.1, 0.0, 0.9] * 2
    _assert_at_most_alpha(_aa(rates, runs=5, seed=20261123))


def test_aa_few_cases_more_runs() -> None:
    # 4 cases, 12 runs each: per-case tests that can reject, little correction
    tally = _aa([0.9, 0.7, 0.5, 0.3], runs=12, seed=7)
    _assert_at_most_alpha(tally)


def _tolerance(probability: float, trials: int) -> float:
    """Three binomial standard deviations of a rate estimated from ``trials``."""
    return 3 * math.sqrt(probability * (1 - probability) / trials)


def test_planted_drop_found_at_the_predicted_power_for_one_case() -> None:
    runs, rate, dropped = 20, 0.9, 0.5
    predicted = regression_power(rate, dropped, runs, runs, ALPHA / 2)
    rng = np.random.default_rng(11)
    found = 0
    for repetition in range(REPETITIONS):
        baseline = _side(rng, [rate], runs, f"b{repetition}")
        candidate = _side(rng, [dropped], runs, f"c{repetition}")
        found += compare_runs(baseline, candidate, alpha=ALPHA).cases[0].verdict == "regression"
    assert abs(found / REPETITIONS - predicted) <= _tolerance(predicted, REPETITIONS)


def test_the_power_lines_smallest_drop_is_found_with_80_percent_power() -> None:
    cases, runs, rate = 8, 20, 0.9
    # the power figure for 8 cases at 90% (18/20 each) with 20 runs per side
    exact_rate = run_with_counts([Counts(f"case_{i:02d}", 18, runs) for i in range(cases)])
    power = compare_runs(exact_rate, exact_rate, alpha=ALPHA).power
    assert power is not None and power.reference_pass_rate == pytest.approx(rate)
    drop = power.minimum_detectable_drop
    assert drop is not None and 0.2 < drop < 0.8
    # plant that drop in one case; the other seven stay at 90%
    rng = np.random.default_rng(3)
    found = 0
    for repetition in range(REPETITIONS):
        baseline = _side(rng, [rate] * cases, runs, f"b{repetition}")
        candidate = _side(rng, [rate - drop] + [rate] * (cases - 1), runs, f"c{repetition}")
        comparison = compare_runs(baseline, candidate, alpha=ALPHA)
        found += comparison.cases[0].verdict == "regression"
    assert abs(found / REPETITIONS - power.target_power) <= _tolerance(0.8, REPETITIONS)
