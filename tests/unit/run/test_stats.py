import pytest

from agentflow_eval.run.stats import pass_at_k, pass_hat_k, wilson_interval


def test_wilson_interval_matches_the_textbook_value():
    # 8 of 10, 95%: the Wilson interval is about (0.490, 0.943).
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-3)
    assert high == pytest.approx(0.9433, abs=1e-3)


def test_wilson_interval_is_honest_at_the_edges():
    low, high = wilson_interval(5, 5)
    assert high == 1.0 and 0.5 < low < 0.6
    low, high = wilson_interval(0, 5)
    assert low == 0.0 and 0.4 < high < 0.5
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_pass_at_k_and_pass_hat_k():
    assert pass_at_k(5, 5, 3) == 1.0
    assert pass_at_k(5, 0, 3) == 0.0
    # 2 of 5 pass: P(at least one of 2 draws passes) = 1 - C(3,2)/C(5,2) = 0.7
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    # P(both of 2 draws pass) = C(2,2)/C(5,2) = 0.1
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    assert pass_at_k(5, 3, 1) == pytest.approx(0.6) == pass_hat_k(5, 3, 1)


def test_bad_k_is_rejected():
    with pytest.raises(ValueError, match=r"k must be within 1\.\.5"):
        pass_at_k(5, 1, 6)
