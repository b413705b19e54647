"""Wilson, Cohen's κ and Rogan–Gladen against known values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from agentflow_eval.review.estimates import cohens_kappa, rogan_gladen, wilson


@pytest.mark.parametrize(("k", "n"), [(8, 10), (0, 5), (5, 5), (37, 120), (1, 1000)])
def test_wilson_is_scipys_wilson_interval_on_counts(k: int, n: int) -> None:
    expected = binomtest(k, n).proportion_ci(method="wilson")
    low, high = wilson(k / n, n)
    assert (low, high) == pytest.approx((expected.low, expected.high), abs=1e-9)


def test_wilson_takes_an_effective_sample_size() -> None:
    assert wilson(0.8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)  # the textbook value
    narrower = wilson(0.8, 40.5)
    assert narrower[0] > 0.4902 and narrower[1] < 0.9433
    assert wilson(0.5, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(1.2, 3)


def test_cohens_kappa_of_known_tables() -> None:
    # Wikipedia's worked example: 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no -> κ = 0.4
    assert cohens_kappa(20, 5, 10, 15) == pytest.approx(0.4)
    # 45/15/25/15 (Wikipedia's second example): κ ≈ 0.1304
    assert cohens_kappa(45, 15, 25, 15) == pytest.approx(0.13043, abs=1e-5)
    assert cohens_kappa(10, 0, 0, 10) == 1.0
    assert math.isnan(cohens_kappa(10, 0, 0, 0))  # one verdict only: undefined
    # shares give what counts give
    assert cohens_kappa(0.4, 0.1, 0.2, 0.3) == pytest.approx(cohens_kappa(4, 1, 2, 3))


def test_rogan_gladen_of_known_values() -> None:
    # a judge with 80% sensitivity and specificity reports 62% when 70% truly pass
    assert rogan_gladen(0.62, 0.8, 0.8) == pytest.approx(0.7)
    # Rogan & Gladen's own form: (0.3 + 0.95 - 1) / (0.9 + 0.95 - 1) = 0.2941...
    assert rogan_gladen(0.3, 0.9, 0.95) == pytest.approx(0.25 / 0.85)
    assert rogan_gladen(0.02, 0.9, 0.95) == 0.0  # clipped
    assert rogan_gladen(0.99, 0.9, 0.95) == 1.0
    assert math.isnan(rogan_gladen(0.5, 0.5, 0.5))  # no better than chance
    many = rogan_gladen(np.array([0.62, 0.5]), np.array([0.8, 0.4]), np.array([0.8, 0.5]))
    assert many[0] == pytest.approx(0.7) and math.isnan(many[1])
