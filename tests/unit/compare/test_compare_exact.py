"""The per-case exact test and Holm's correction, against values computed by hand."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from agentflow_eval.compare.exact import (
    BOSCHLOO_MAX_TABLE,
    choose_method,
    exact_test,
    holm,
    one_sided_p_value,
)


def test_boschloo_total_collapse_at_five_runs() -> None:
    # Baseline 5/5, candidate 0/5. Fisher's one-sided p-value of this table is the
    # hypergeometric probability of the candidate drawing 0 of the 5 passes among 10:
    # 1 / C(10, 5) = 1/252; no other table is that extreme, so Boschloo's p-value is the
    # largest probability of this one table over the common pass rate q:
    # max_q q^5 (1 - q)^5 = (1/2)^10 = 1/1024 (at q = 1/2). Two-sided: 2/1024.
    assert one_sided_p_value(5, 5, 0, 5, "less") == pytest.approx(1 / 1024, rel=1e-6)
    result = exact_test(5, 5, 0, 5)
    assert result.p_value == pytest.approx(2 / 1024, rel=1e-6)
    assert result.direction == -1 and result.method == "boschloo"
    # Fisher's own p-value for the same table is four times larger
    fisher = stats.fisher_exact([[0, 5], [5, 0]], alternative="less").pvalue
    assert fisher == pytest.approx(1 / 252)


def test_one_trial_each_side() -> None:
    # Baseline 1/1, candidate 0/1: Fisher's one-sided p-value is 1/2 (one pass among
    # two trials, the candidate draws one trial); the tables at least that extreme are
    # this one only (the others have Fisher p-value 1), so Boschloo's p-value is
    # max_q q (1 - q) = 1/4; two-sided 1/2.
    assert one_sided_p_value(1, 1, 0, 1, "less") == pytest.approx(0.25, rel=1e-6)
    assert exact_test(1, 1, 0, 1).p_value == pytest.approx(0.5, rel=1e-6)


def test_an_improvement_mirrors_a_regression() -> None:
    down, up = exact_test(5, 5, 0, 5), exact_test(0, 5, 5, 5)
    assert up.direction == 1 and up.p_value == pytest.approx(down.p_value)


def test_no_change_is_not_significant() -> None:
    for passed in range(6):
        result = exact_test(passed, 5, passed, 5)
        assert result.direction == 0 and result.p_value > 0.9


@pytest.mark.parametrize(
    ("passed_b", "n_b", "passed_c", "n_c"),
    [(4, 5, 1, 5), (3, 4, 2, 6), (2, 5, 4, 5), (3, 3, 3, 3), (0, 2, 1, 3), (6, 7, 2, 4)],
)
def test_two_sided_p_value_is_scipys(passed_b: int, n_b: int, passed_c: int, n_c: int) -> None:
    # scipy's two-sided Boschloo p-value doubles the smaller one-sided one; the test
    # computes only the observed direction's, which must be that smaller one.
    table = [[passed_c, passed_b], [n_c - passed_c, n_b - passed_b]]
    expected = stats.boschloo_exact(table, alternative="two-sided").pvalue
    assert exact_test(passed_b, n_b, passed_c, n_c).p_value == pytest.approx(expected, rel=1e-9)


def test_large_cases_use_fishers_test() -> None:
    # 51 x 51 trials is past Boschloo's limit. Baseline 51/51, candidate 0/51: Fisher's
    # one-sided p-value is 1 / C(102, 51) (the candidate draws none of the 51 passes).
    assert BOSCHLOO_MAX_TABLE < 51 * 51 and choose_method(51, 51) == "fisher"
    assert choose_method(50, 50) == "boschloo"
    result = exact_test(51, 51, 0, 51)
    assert result.method == "fisher"
    assert result.p_value == pytest.approx(2 / math.comb(102, 51), rel=1e-9)


def test_counts_are_checked() -> None:
    with pytest.raises(ValueError, match="baseline"):
        exact_test(6, 5, 0, 5)
    with pytest.raises(ValueError, match="candidate"):
        exact_test(1, 5, 0, 0)


def test_holm_by_hand() -> None:
    # sorted: 0.005 x 4 = 0.02; 0.01 x 3 = 0.03; 0.03 x 2 = 0.06; 0.04 x 1 = 0.04, raised
    # to the running maximum 0.06. Back in the given order:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # capped at 1: 0.5 x 2 = 1.0, then 0.6 x 1 = 0.6 raised to 1.0
    assert holm([0.6, 0.5]) == pytest.approx([1.0, 1.0])
    assert holm([0.02]) == [0.02]
    assert holm([]) == []
