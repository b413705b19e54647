"""The overall change paired by case, against values computed by hand."""

from __future__ import annotations

import pytest

from agentflow_eval.compare.paired import CasePair, paired_change


def test_clustered_standard_error_by_hand() -> None:
    pairs = [
        CasePair(20, 20, 10, 20),  # d = -0.5
        CasePair(20, 20, 20, 20),  # d = 0
        CasePair(10, 20, 10, 20),  # d = 0
        CasePair(0, 20, 0, 20),  # d = 0
    ]
    result = paired_change(pairs, alpha=0.05)
    # mean change: -0.5 / 4 = -0.125
    assert result.change == pytest.approx(-0.125)
    # per-case rates: baseline (1 + 1 + 0.5 + 0) / 4, candidate (0.5 + 1 + 0.5 + 0) / 4
    assert result.baseline_rate == pytest.approx(0.625)
    assert result.candidate_rate == pytest.approx(0.5)
    # sample variance of d: ((-0.375)^2 + 3 x 0.125^2) / 3 = (0.140625 + 0.046875) / 3
    # = 0.0625; clustered SE = sqrt(0.0625 / 4) = 0.125
    assert result.clustered_se == pytest.approx(0.125)
    # trial part, p(1-p)/(n-1) per side: case 1 candidate 0.25/19, case 3 2 x 0.25/19,
    # others 0: total 0.75/19 = 0.0394737; SE sqrt(0.0394737) / 4 = 0.0496700
    assert result.trial_se == pytest.approx(0.0496700, rel=1e-5)
    assert result.standard_error == pytest.approx(0.125)  # the clustered one is larger
    # t(0.975, 3 df) = 3.182446: -0.125 +- 0.397806
    assert result.ci_low == pytest.approx(-0.522806, rel=1e-5)
    assert result.ci_high == pytest.approx(0.272806, rel=1e-5)
    # t = -0.125 / 0.125 = -1 with 3 df; for 3 df, P(T > t) = 1/2 - (atan(u) + u / (1 +
    # u^2)) / pi with u = t / sqrt(3): u = 0.577350, atan(u) = pi/6 = 0.523599,
    # u / (4/3) = 0.433013; 1/2 - 0.956612 / pi = 0.195501; two-sided 0.391002
    assert result.p_value == pytest.approx(0.391002, rel=1e-5)


def test_trial_sampling_floor_by_hand() -> None:
    pairs = [
        CasePair(5, 5, 4, 5),  # d = -0.2
        CasePair(3, 5, 1, 5),  # d = -0.4
        CasePair(2, 4, 2, 4),  # d = 0
    ]
    result = paired_change(pairs, alpha=0.05)
    assert result.change == pytest.approx(-0.2)
    # sample variance: (0 + 0.2^2 + 0.2^2) / 2 = 0.04; clustered SE sqrt(0.04 / 3) = 0.115470
    assert result.clustered_se == pytest.approx(0.115470, rel=1e-5)
    # trial part: case 1: 0 + 0.8 x 0.2 / 4 = 0.04; case 2: 0.6 x 0.4 / 4 + 0.2 x 0.8 / 4
    # = 0.10; case 3: 2 x 0.5 x 0.5 / 3 = 0.166667. Sum 0.306667, SE sqrt(.) / 3 = 0.184591
    assert result.trial_se == pytest.approx(0.184591, rel=1e-5)
    assert result.standard_error == pytest.approx(0.184591, rel=1e-5)  # the floor applies
    # t(0.975, 2 df) = 4.302653: -0.2 +- 0.794232
    assert result.ci_low == pytest.approx(-0.994232, rel=1e-5)
    assert result.ci_high == pytest.approx(0.594232, rel=1e-5)


def test_identical_changes_do_not_claim_certainty() -> None:
    # two cases that both went from 5/5 to 4/5: the differences do not vary at all, yet
    # the trials hold real uncertainty: 0.8 x 0.2 / 4 = 0.04 per case, SE sqrt(0.08)/2
    result = paired_change([CasePair(5, 5, 4, 5), CasePair(5, 5, 4, 5)], alpha=0.05)
    assert result.clustered_se == 0.0
    assert result.standard_error == pytest.approx(0.141421, rel=1e-5)
    assert result.ci_low is not None and result.ci_high is not None
    assert result.ci_low < 0 < result.ci_high


def test_a_single_trial_counts_the_largest_variance() -> None:
    # one trial per side cannot estimate its variance: 1/4 per side, 1/2 per case
    result = paired_change([CasePair(1, 1, 0, 1), CasePair(1, 1, 0, 1)], alpha=0.05)
    assert result.trial_se == pytest.approx((2 * 0.5) ** 0.5 / 2)


def test_one_case_has_no_interval() -> None:
    result = paired_change([CasePair(5, 5, 0, 5)], alpha=0.05)
    assert result.change == pytest.approx(-1.0)
    assert result.standard_error is None and result.ci_low is None and result.p_value is None


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="no cases"):
        paired_change([], alpha=0.05)
    with pytest.raises(ValueError, match="alpha"):
        paired_change([CasePair(1, 2, 1, 2)], alpha=1.5)


def test_the_interval_never_leaves_what_a_change_of_pass_rates_can_be() -> None:
    """Two cases: t(0.975, 1) = 12.7 would give ±420 pts; the interval is cut to ±100."""
    pairs = [CasePair(3, 3, 0, 3), CasePair(0, 3, 3, 3)]  # one case lost, one gained
    change = paired_change(pairs, 0.05)
    assert change.change == 0.0
    assert (change.ci_low, change.ci_high) == (-1.0, 1.0)
    assert change.p_value == pytest.approx(1.0)
    narrow = paired_change([CasePair(5, 5, 4, 5)] * 30, 0.05)
    assert -1.0 < narrow.ci_low < narrow.change < narrow.ci_high < 1.0  # untouched
