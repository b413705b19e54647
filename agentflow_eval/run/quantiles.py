"""Quantiles of a few measurements with distribution-free intervals.

A case runs a handful of trials, and their costs and latencies are skewed (a retry, a
long tool call), so a mean with a normal interval would mislead. A quantile's interval
from order statistics assumes nothing about the distribution: with the values sorted,
x₍ⱼ₎ ≤ ξₚ < x₍ₖ₎ holds exactly when between j and k − 1 of the n values fall below ξₚ,
and that count is Binomial(n, p). The bounds are chosen so each tail misses at most
α/2; with too few values for that they stop at the smallest and largest, and the
interval's actual coverage (``coverage``) says how much less than asked it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["QuantileEstimate", "binomial_cdf", "quantile", "quantile_interval"]


@dataclass(frozen=True)
class QuantileEstimate:
    """A quantile of a sample, with its order-statistic interval."""

    value: float
    """The sample quantile (linear interpolation between order statistics)."""
    low: float
    """The interval's lower bound (an observed value)."""
    high: float
    """The interval's upper bound (an observed value)."""
    coverage: float
    """The interval's exact coverage under Binomial(n, p): the confidence asked for, or
    less when the sample is too small to reach it."""


def quantile(values: Sequence[float], p: float) -> float:
    """The ``p``-quantile of ``values``, interpolated linearly between order statistics
    (numpy's default): the median of 1, 2, 3, 4 is 2.5."""
    if not values:
        raise ValueError("a quantile needs at least one value")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be within 0..1, got {p}")
    ordered = sorted(values)
    at = p * (len(ordered) - 1)
    below = int(at)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (at - below)


def quantile_interval(
    values: Sequence[float], p: float, confidence: float = 0.95
) -> QuantileEstimate:
    """The ``p``-quantile of ``values`` and its distribution-free ``confidence`` interval
    [x₍ⱼ₎, x₍ₖ₎] (1-based order statistics): j the largest with P(B ≤ j − 1) ≤ α/2, k the
    smallest with P(B ≥ k) ≤ α/2, B ~ Binomial(n, p), each kept within 1..n."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be within (0, 1), got {confidence}")
    value = quantile(values, p)
    ordered = sorted(values)
    n = len(ordered)
    tail = (1.0 - confidence) / 2.0
    cdf = binomial_cdf(n, p)
    j = 1
    while j < n and cdf[j] <= tail:
        j += 1
    k = n
    while k > 1 and 1.0 - cdf[k - 2] <= tail:
        k -= 1
    coverage = max(0.0, cdf[k - 1] - cdf[j - 1])
    return QuantileEstimate(
        value=value, low=float(ordered[j - 1]), high=float(ordered[k - 1]), coverage=coverage
    )


def binomial_cdf(n: int, p: float) -> list[float]:
    """P(B ≤ i) for i in 0..n, B ~ Binomial(n, p), from log-space probabilities (exact
    enough for thousands of trials, where the coefficients overflow a float)."""
    if p <= 0.0 or p >= 1.0:
        return [1.0 if p <= 0.0 or i == n else 0.0 for i in range(n + 1)]
    log_p, log_q = math.log(p), math.log1p(-p)
    log_n = math.lgamma(n + 1)
    total, out = 0.0, []
    for i in range(n + 1):
        log_pmf = log_n - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p
        total += math.exp(log_pmf + (n - i) * log_q)
        out.append(min(1.0, total))
    return out
