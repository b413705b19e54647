"""Power of the per-case regression test: what a "no significant change" can and cannot
mean for the number of trials a run used.

For ``n_b`` and ``n_c`` trials, the test of :mod:`agentflow_eval.compare.exact` flags a
regression at one-sided level ``L`` for a set of outcomes ``(passed_b, passed_c)``: its
rejection region. Its power against true pass rates ``p_b`` and ``p_c`` is the binomial
probability of that region, ``sum over the region of Binom(passed_b; n_b, p_b) *
Binom(passed_c; n_c, p_c)``: exact, for the very test the comparison runs.

Finding the region takes a few tests, not one per outcome: Boschloo's (and Fisher's)
p-value grows with Fisher's one-sided p-value of the outcome (Boschloo's test uses it as
its statistic), so the region is every outcome up to some Fisher p-value, found by
bisection over the outcomes sorted by it.

The level: a case is flagged when its Holm-adjusted two-sided p-value is at most α,
which for a case that regressed alone among ``m`` needs a one-sided p-value at most
``α / (2m)``; ``α / 2`` for a case tested alone.

**Runs needed** for a given drop: the smallest number of trials per side (both alike) at
which the exact power reaches the target, searched from the normal-approximation estimate
for two proportions (Fleiss, Levin and Paik, "Statistical Methods for Rates and
Proportions", 3rd ed., 2003, eq. 4.14): galloping from it to a bracket, then bisecting.
Exact power rises with ``n`` except for small dips caused by the discreteness of the
counts, so this is a crossing near the estimate: at the number given the power reaches
the target, one trial fewer it does not.

Above :data:`EXACT_MAX_RUNS` trials per side the region has too many outcomes to
enumerate quickly, and the two-proportion normal approximation (same reference) is used
for power, for the smallest detectable drop and for runs needed; results say which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
import numpy.typing as npt

from agentflow_eval.compare.exact import choose_method, one_sided_p_value

__all__ = [
    "EXACT_MAX_RUNS",
    "TARGET_POWER",
    "PowerMethod",
    "RunsNeeded",
    "minimum_detectable_drop",
    "power_method",
    "regression_power",
    "rejection_region",
    "runs_needed",
]

TARGET_POWER = 0.8
EXACT_MAX_RUNS = 100
"""Most trials per side for which power is computed exactly."""

_TIES = 1 + 1e-13  # Fisher p-values equal up to rounding are one value (as scipy has it)

PowerMethod = Literal["exact", "normal approximation"]


def power_method(n_b: int, n_c: int) -> PowerMethod:
    return "exact" if max(n_b, n_c) <= EXACT_MAX_RUNS else "normal approximation"


@dataclass(frozen=True)
class _Region:
    mask: npt.NDArray[np.bool_]  # [passed_b, passed_c] -> flagged as a regression


def _fisher_less(n_b: int, n_c: int) -> npt.NDArray[np.float64]:
    """Fisher's one-sided ("candidate lower") p-value of every outcome, [passed_b,
    passed_c]: the hypergeometric probability of the candidate having at most its passes,
    given the passes of both. Cumulated along each total from scipy's hypergeometric
    probabilities (one pass over the grid; ``hypergeom.cdf`` per outcome re-sums)."""
    from scipy import stats

    totals = np.arange(n_b + n_c + 1)[:, None]
    candidate = np.arange(n_c + 1)[None, :]
    # [total passes, candidate passes]: zero where the pair is impossible
    probability = stats.hypergeom.pmf(candidate, n_b + n_c, totals, n_c)
    cumulative = np.minimum(np.cumsum(probability, axis=1), 1.0)
    passed_b, passed_c = np.meshgrid(np.arange(n_b + 1), np.arange(n_c + 1), indexing="ij")
    return np.asarray(cumulative[passed_b + passed_c, passed_c], dtype=np.float64)


@lru_cache(maxsize=256)
def _region(n_b: int, n_c: int, level: float) -> _Region:
    fisher = _fisher_less(n_b, n_c)
    if choose_method(n_b, n_c) == "fisher":
        return _Region(fisher <= level * _TIES)
    order = np.argsort(fisher, axis=None, kind="stable")
    ranked = fisher.ravel()[order]

    def flagged(rank: int) -> bool:
        passed_b, passed_c = np.unravel_index(order[rank], fisher.shape)
        return one_sided_p_value(int(passed_b), n_b, int(passed_c), n_c, "less") <= level

    # the largest rank still flagged (-1: none); flagged() is monotone in rank
    low, high = -1, len(ranked) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if flagged(middle):
            low = middle
        else:
            high = middle - 1
    if low < 0:
        return _Region(np.zeros_like(fisher, dtype=bool))
    return _Region(fisher <= ranked[low] * _TIES)


def _check(n_b: int, n_c: int, level: float) -> None:
    if n_b < 1 or n_c < 1:
        raise ValueError(f"need at least one trial per side, got {n_b} and {n_c}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")


def rejection_region(n_b: int, n_c: int, level: float) -> npt.NDArray[np.bool_]:
    """The outcomes ``[passed_b, passed_c]`` the regression test flags at one-sided
    ``level`` (a read-only copy)."""
    _check(n_b, n_c, level)
    mask = _region(n_b, n_c, level).mask.copy()
    mask.flags.writeable = False
    return mask


def _normal_power(p_b: float, p_c: float, n_b: int, n_c: int, level: float) -> float:
    """Power of the one-sided two-proportion z-test (Fleiss et al., eq. 4.14 solved
    for the power)."""
    from scipy import stats

    drop = p_b - p_c
    pooled = (n_b * p_b + n_c * p_c) / (n_b + n_c)
    null_sd = math.sqrt(pooled * (1 - pooled) * (1 / n_b + 1 / n_c))
    sd = math.sqrt(p_b * (1 - p_b) / n_b + p_c * (1 - p_c) / n_c)
    if sd == 0:
        return 1.0 if drop > 0 else 0.0
    return float(stats.norm.cdf((drop - float(stats.norm.isf(level)) * null_sd) / sd))


def _check_rate(rate: float) -> None:
    if not 0 <= rate <= 1:
        raise ValueError(f"pass rates must be within [0, 1], got {rate}")


def _exact_powers(
    p_b: float, p_c: npt.NDArray[np.float64], n_b: int, n_c: int, level: float
) -> npt.NDArray[np.float64]:
    """Exact power against each candidate rate in ``p_c`` (one pass over the region)."""
    from scipy import stats

    mask = _region(n_b, n_c, level).mask
    baseline = stats.binom.pmf(np.arange(n_b + 1), n_b, p_b)
    candidate = stats.binom.pmf(np.arange(n_c + 1)[:, None], n_c, p_c[None, :])
    return np.asarray(np.minimum(1.0, (baseline @ mask) @ candidate), dtype=np.float64)


def regression_power(p_b: float, p_c: float, n_b: int, n_c: int, level: float) -> float:
    """The probability that the test flags a regression at one-sided ``level`` when the
    true pass rates are ``p_b`` (baseline) and ``p_c`` (candidate); see
    :func:`power_method` for how it is computed."""
    _check(n_b, n_c, level)
    _check_rate(p_b)
    _check_rate(p_c)
    if power_method(n_b, n_c) != "exact":
        return _normal_power(p_b, p_c, n_b, n_c, level)
    return float(_exact_powers(p_b, np.array([p_c]), n_b, n_c, level)[0])


def minimum_detectable_drop(
    p_b: float, n_b: int, n_c: int, level: float, target: float = TARGET_POWER
) -> float | None:
    """The smallest drop ``d`` in pass rate (from ``p_b`` to ``p_b - d``) the test flags
    with probability ``target``; None when even a drop to 0 is flagged less often. Power
    falls as the candidate's rate rises (the region holds the low candidate counts), so
    the drop is where ``power(d)`` crosses ``target``: found on a grid of 64 drops,
    refined on a grid of 64 within the bracket, and so on to 1e-4."""
    _check(n_b, n_c, level)
    _check_rate(p_b)

    def powers(drops: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        rates = np.clip(p_b - drops, 0.0, 1.0)
        if power_method(n_b, n_c) == "exact":
            return _exact_powers(p_b, rates, n_b, n_c, level)
        return np.array([_normal_power(p_b, float(rate), n_b, n_c, level) for rate in rates])

    if powers(np.array([p_b]))[0] < target:
        return None
    low, high = 0.0, p_b  # power(low) < target <= power(high), unless it is reached at 0
    if powers(np.array([0.0]))[0] >= target:
        return 0.0
    while high - low > 1e-4:
        grid = np.linspace(low, high, 65)
        reached = np.flatnonzero(powers(grid) >= target)
        first = int(reached[0])  # the grid's last point (high) always reaches
        low, high = float(grid[max(first - 1, 0)]), float(grid[first])
    return high


@dataclass(frozen=True)
class RunsNeeded:
    """Trials per side (both alike) to flag a drop with the target power, and how that
    was computed. ``exceeds``: the exact search reached ``runs`` without getting there
    (read "more than ``runs``")."""

    runs: int
    method: PowerMethod
    exceeds: bool = False


def _normal_estimate(p_b: float, p_c: float, level: float, target: float) -> int:
    """Trials per side for a one-sided two-proportion test (Fleiss et al., eq. 4.14)."""
    from scipy import stats

    z_level = float(stats.norm.isf(level))
    z_power = float(stats.norm.ppf(target))
    mean = (p_b + p_c) / 2
    spread = z_level * math.sqrt(2 * mean * (1 - mean)) + z_power * math.sqrt(
        p_b * (1 - p_b) + p_c * (1 - p_c)
    )
    return max(1, math.ceil((spread / (p_b - p_c)) ** 2))


def runs_needed(
    p_b: float, drop: float, level: float, target: float = TARGET_POWER
) -> RunsNeeded | None:
    """The trials per side with which the test flags a drop from ``p_b`` to ``p_b -
    drop`` with probability ``target``; None when that drop is not possible from
    ``p_b``. Exact up to :data:`EXACT_MAX_RUNS`, the normal approximation beyond."""
    if not 0 < drop <= p_b <= 1:
        return None
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    p_c = p_b - drop
    estimate = _normal_estimate(p_b, p_c, level, target)
    approximate = RunsNeeded(estimate, "normal approximation")
    if estimate > EXACT_MAX_RUNS:
        return approximate

    def reaches(n: int) -> bool:
        return regression_power(p_b, p_c, n, n, level) >= target

    # gallop from the estimate to a bracket (low misses or is 0, high reaches), bisect
    step = 1
    if reaches(estimate):
        high = estimate
        low = max(0, high - step)
        while low > 0 and reaches(low):
            high, step = low, step * 2
            low = max(0, high - step)
    else:
        low = estimate
        high = min(EXACT_MAX_RUNS, low + step)
        while not reaches(high):
            if high == EXACT_MAX_RUNS:
                return RunsNeeded(EXACT_MAX_RUNS, "exact", exceeds=True)
            low, step = high, step * 2
            high = min(EXACT_MAX_RUNS, low + step)
    while high - low > 1:
        middle = (low + high) // 2
        if reaches(middle):
            high = middle
        else:
            low = middle
    return RunsNeeded(high, "exact")
