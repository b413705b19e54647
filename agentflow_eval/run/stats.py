"""Statistics for pass rates over repeated trials.

A pass rate from five trials is a small sample: report it with an interval, and estimate
pass@k (at least one of k tries passes) and pass^k (all k pass) without bias from n trials.
"""

from __future__ import annotations

import math

__all__ = ["pass_at_k", "pass_hat_k", "wilson_interval"]


def wilson_interval(passed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for ``passed`` successes in ``n`` trials (95% by default).

    Unlike the normal approximation it stays inside [0, 1] and is honest at 0/n and n/n.
    """
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= passed <= n:
        raise ValueError(f"passed must be within 0..{n}, got {passed}")
    p = passed / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def pass_at_k(n: int, passed: int, k: int) -> float:
    """Unbiased estimate that at least one of ``k`` trials passes, from ``passed`` of ``n``."""
    _check(n, passed, k)
    if n - passed < k:
        return 1.0
    return 1.0 - math.comb(n - passed, k) / math.comb(n, k)


def pass_hat_k(n: int, passed: int, k: int) -> float:
    """Unbiased estimate that all ``k`` trials pass (pass^k, reliability), from ``passed``
    of ``n``."""
    _check(n, passed, k)
    return math.comb(passed, k) / math.comb(n, k)


def _check(n: int, passed: int, k: int) -> None:
    if not 1 <= k <= n:
        raise ValueError(f"k must be within 1..{n}, got {k}")
    if not 0 <= passed <= n:
        raise ValueError(f"passed must be within 0..{n}, got {passed}")
