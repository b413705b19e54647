"""Anytime-valid per-case verdicts from paired trials: the e-values and the confidence
sequence on known pairs, the statuses, the waves, and — simulated through the design
itself — the family-wise error under continuous monitoring and the power at a budget."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentflow_eval.compare.power import regression_power
from agentflow_eval.compare.sequential import (
    PAIRS_PER_CASE_IN_A_WAVE,
    CaseEvidence,
    Design,
    Ledger,
    allocate_wave,
    case_status,
)
from tests.support.sequential_sim import CASES, baseline_rates, simulate

ALPHA = 0.05


def evidence(*pairs: tuple[float, float], clear_drop: float = 0.2) -> CaseEvidence:
    made = CaseEvidence(clear_drop)
    for baseline, candidate in pairs:
        made.add(baseline, candidate)
    return made


def test_concordant_pairs_carry_no_evidence() -> None:
    same = evidence((1, 1), (0, 0), (1, 1))
    assert same.log_e_drop == pytest.approx(0.0) and same.discordant == 0
    assert same.change == 0.0


def test_a_case_that_fails_every_trial_it_passed_is_flagged_within_fourteen_pairs() -> None:
    """From 100 % to 0 %: every pair says so; with 40 cases at 5 %, the e-value needs
    800. Five pairs (today's default runs) cannot get there; fourteen do."""
    stark = evidence(*[(1.0, 0.0)] * 5)
    assert case_status(stark, CASES, ALPHA, None) == "undecided"
    for _ in range(9):
        stark.add(1.0, 0.0)
    assert case_status(stark, CASES, ALPHA, None) == "regressed"
    # the average of the bets, by hand: mean over λ of (1 + λ)^14
    by_hand = np.mean([(1 + bet) ** 14 for bet in np.linspace(0.05, 0.95, 19)])
    assert stark.log_e_drop == pytest.approx(math.log(by_hand))
    low, high = stark.interval(ALPHA)
    assert high < -0.3 and low >= -1.0


def test_a_candidate_that_does_better_is_never_flagged_and_is_cleared() -> None:
    better = evidence(*[(0.0, 1.0)] * 30)
    assert better.log_e_drop < 0
    assert case_status(better, CASES, ALPHA, None) == "improved"
    assert better.log_e_clear > math.log(1 / ALPHA)  # and no drop, by far
    assert better.interval(ALPHA)[0] > 0.5


def test_a_judges_split_verdict_counts_as_its_share() -> None:
    """A trial whose judge passed it with 2 of 3 samples counts 2/3 of a pass: a pair of
    a firm pass and a split pass is weaker evidence than a firm pass and a firm fail."""
    firm = evidence((1.0, 0.0))
    split = evidence((1.0, 2 / 3))
    assert 0 < split.log_e_drop < firm.log_e_drop


def test_the_interval_covers_the_change_and_narrows() -> None:
    rng = np.random.default_rng(11)
    case = CaseEvidence(0.2)
    widths = []
    for n in range(1, 201):
        case.add(float(rng.random() < 0.8), float(rng.random() < 0.6))
        if n in (20, 200):
            low, high = case.interval(ALPHA)
            assert low <= -0.2 <= high
            widths.append(high - low)
    assert widths[1] < widths[0] / 2


def test_a_case_at_its_cap_is_capped_and_a_regression_stays_found() -> None:
    ledger = Ledger(Design(max_pairs_per_case=3), ["a", "b"])
    for _ in range(3):
        ledger.record("a", 1.0, 1.0)
    ledger.settle()
    assert ledger.status == {"a": "capped", "b": "undecided"}
    for _ in range(14):
        ledger.record("b", 1.0, 0.0)
    ledger.settle(["b"])
    assert ledger.status["b"] == "regressed"
    assert ledger.spent == 2 * 17


def test_a_wave_goes_to_the_most_suspicious_cases_first() -> None:
    cases = {
        "quiet": evidence(*[(1.0, 1.0)] * 10),
        "suspect": evidence(*[(1.0, 0.0)] * 3, (1.0, 1.0)),
        "new": CaseEvidence(0.2),
    }
    wave = allocate_wave(cases, ["quiet", "suspect", "new"], 9, cap=None)
    per = PAIRS_PER_CASE_IN_A_WAVE
    assert wave == ["new"] * per + ["suspect"] * per + ["quiet"]
    assert allocate_wave(cases, ["suspect"], 9, cap=5) == ["suspect"]  # 4 pairs, cap 5
    spent = Ledger(Design(max_trials=10), ["a"])
    spent.record("a", 1, 1)
    assert len(spent.next_wave()) == 4  # the budget leaves 8 trials: 4 pairs


def test_continuous_monitoring_holds_the_family_wise_error() -> None:
    """1,000 A/A paired runs of 40 cases, every case's evidence looked at after every
    pair, the budget spent on the cases that looked worst: the share of runs with any
    case flagged stays at most α."""
    rng = np.random.default_rng(20261128)
    design = Design(alpha=ALPHA, max_trials=1600)
    runs = [simulate(rng, [], design) for _ in range(1000)]
    with_a_false_flag = sum(run.false_flags > 0 for run in runs) / len(runs)
    print(f"A/A: {with_a_false_flag:.3f} of 1,000 runs flagged any case")
    assert with_a_false_flag <= ALPHA
    assert all(run.trials == 1600 for run in runs)  # the design spent its budget looking


def test_three_dropped_cases_are_found_within_the_budget() -> None:
    """3 of 40 cases dropped by 20-40 points, 1,600 trials (both agents): each dropped
    case is found with probability at least 0.7; a fixed design (the exact per-case
    test with Holm's correction) needs many more trials for the same power."""
    rng = np.random.default_rng(7)
    design = Design(alpha=ALPHA, max_trials=1600)
    runs = [simulate(rng, list(rng.uniform(0.2, 0.4, 3)), design) for _ in range(500)]
    power = sum(run.flagged_dropped for run in runs) / sum(run.dropped for run in runs)
    level = ALPHA / (2 * CASES)
    draws = list(zip(baseline_rates(rng), rng.uniform(0.2, 0.4, CASES), strict=True))

    def fixed_power(n: int) -> float:
        return float(np.mean([regression_power(p, max(0.0, p - d), n, n, level)
                              for p, d in draws]))  # fmt: skip

    runs_per_side = next(n for n in range(5, 400) if fixed_power(n) >= power)
    fixed_trials = 2 * CASES * runs_per_side
    print(f"power {power:.2f} with 1,600 trials; a fixed design: {fixed_trials:,} trials")
    assert power >= 0.7
    assert fixed_trials > 2 * 1600
