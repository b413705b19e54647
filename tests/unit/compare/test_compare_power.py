"""Power of the per-case test: rejection regions, power, the smallest detectable drop and
the runs a drop needs, against values computed by hand."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from agentflow_eval.compare.exact import one_sided_p_value
from agentflow_eval.compare.power import (
    EXACT_MAX_RUNS,
    RunsNeeded,
    minimum_detectable_drop,
    power_method,
    regression_power,
    rejection_region,
    runs_needed,
)


def test_one_trial_each_side_by_hand() -> None:
    # One trial per side: only (baseline 1, candidate 0) can be a regression, with
    # Boschloo p-value 1/4 (see test_compare_exact). At level 0.3 the region is that
    # outcome; at 0.2 it is empty.
    assert rejection_region(1, 1, 0.3).tolist() == [[False, False], [True, False]]
    assert not rejection_region(1, 1, 0.2).any()
    # power = P(baseline passes) x P(candidate fails) = 0.9 x 0.9
    assert regression_power(0.9, 0.1, 1, 1, 0.3) == pytest.approx(0.81)
    assert regression_power(0.9, 0.1, 1, 1, 0.2) == 0.0
    # from a baseline of 1: power = 1 - p_c = d, so 80% power needs a drop of 0.8
    assert minimum_detectable_drop(1.0, 1, 1, 0.3) == pytest.approx(0.8, abs=1e-4)
    # from 0.9: 0.9 x (0.1 + d) >= 0.8 -> d >= 0.8 / 0.9 - 0.1 = 0.788889
    assert minimum_detectable_drop(0.9, 1, 1, 0.3) == pytest.approx(0.788889, abs=1e-4)
    # from 0.5 even a drop to 0 is flagged only half the time
    assert minimum_detectable_drop(0.5, 1, 1, 0.3) is None


def test_five_runs_at_a_strict_level_by_hand() -> None:
    # At one-sided level 0.001 (between 1/1024 and the next table's p-value) five runs
    # per side flag only 5/5 -> 0/5.
    region = rejection_region(5, 5, 0.001)
    assert region.sum() == 1 and region[5, 0]
    # power = 0.9^5 x 0.5^5 = 0.59049 x 0.03125
    assert regression_power(0.9, 0.5, 5, 5, 0.001) == pytest.approx(0.0184528, rel=1e-5)
    # from 1: (1 - p_c)^5 >= 0.8 -> d >= 0.8^(1/5) = 0.956352
    assert minimum_detectable_drop(1.0, 5, 5, 0.001) == pytest.approx(0.956352, abs=1e-4)


@pytest.mark.parametrize("level", [0.05, 0.01])
def test_bisected_region_is_the_test_on_every_outcome(level: float) -> None:
    # the region found by bisection equals the test run on each of the 30 outcomes
    brute = np.zeros((5, 6), dtype=bool)
    for passed_b, passed_c in itertools.product(range(5), range(6)):
        brute[passed_b, passed_c] = one_sided_p_value(passed_b, 4, passed_c, 5, "less") <= level
    assert (rejection_region(4, 5, level) == brute).all()
    assert brute.any()


def test_region_is_read_only() -> None:
    region = rejection_region(3, 3, 0.1)
    with pytest.raises(ValueError):
        region[0, 0] = True


def test_power_grows_with_the_drop_and_the_runs() -> None:
    drops = [regression_power(0.9, 0.9 - d, 10, 10, 0.025) for d in (0.1, 0.3, 0.5, 0.7)]
    assert drops == sorted(drops) and drops[0] < 0.1 < 0.9 < drops[-1]
    assert regression_power(0.9, 0.5, 10, 10, 0.025) < regression_power(0.9, 0.5, 20, 20, 0.025)
    # no drop: at most the level (the test is exact)
    for rate in (0.1, 0.5, 0.9):
        assert regression_power(rate, rate, 8, 8, 0.025) <= 0.025


def test_runs_needed_is_the_crossing() -> None:
    for p_b, drop, level in [(0.9, 0.4, 0.025), (1.0, 0.5, 0.025), (0.9, 0.6, 0.00125)]:
        needed = runs_needed(p_b, drop, level)
        assert needed is not None and needed.method == "exact" and not needed.exceeds
        n = needed.runs
        assert regression_power(p_b, p_b - drop, n, n, level) >= 0.8
        assert n == 1 or regression_power(p_b, p_b - drop, n - 1, n - 1, level) < 0.8


def test_runs_needed_beyond_the_exact_range_by_hand() -> None:
    # Fleiss eq. 4.14, p_b 0.5 -> p_c 0.3 at one-sided 0.0025 and 80% power:
    # z(0.0025) = 2.807034, z(0.8) = 0.841621, mean 0.4: sqrt(2 x 0.4 x 0.6) = 0.692820,
    # sqrt(0.25 + 0.21) = 0.678233; (2.807034 x 0.692820 + 0.841621 x 0.678233)^2 / 0.2^2
    # = (1.944770 + 0.570815)^2 / 0.04 = 158.2 -> 159 trials per side, past the exact range
    assert runs_needed(0.5, 0.2, 0.0025) == RunsNeeded(159, "normal approximation")
    assert EXACT_MAX_RUNS < 159 and power_method(159, 159) == "normal approximation"


def test_runs_needed_for_impossible_drops() -> None:
    assert runs_needed(0.1, 0.2, 0.025) is None  # cannot drop 20 points from 10%
    assert runs_needed(0.5, 0.0, 0.025) is None
