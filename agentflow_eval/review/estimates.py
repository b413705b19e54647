"""The formulas agreement is built from: the Wilson score interval (for an effective
sample size that need not be whole), Cohen's κ of a 2×2 table, and the Rogan–Gladen
correction of an observed rate for a test's sensitivity and specificity."""

from __future__ import annotations

import math
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

__all__ = ["Z95", "cohens_kappa", "rogan_gladen", "wilson"]

Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""

Value = TypeVar("Value", float, NDArray[np.float64])


def wilson(rate: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``rate`` observed over ``n`` trials
    (95% by default). ``n`` may be an effective sample size (a weighted estimate's
    ``rate·(1−rate)/variance``), not only a count; with none, the interval is [0, 1]."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"a proportion is within [0, 1], got {rate}")
    if n <= 0:
        return (0.0, 1.0)
    z2 = z * z
    centre = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def cohens_kappa(
    both_pass: float, first_only: float, second_only: float, both_fail: float
) -> float:
    """Cohen's κ of two raters' pass/fail verdicts from the cells of their 2×2 table
    (counts or shares): both passed, only the first passed, only the second passed, both
    failed. ``nan`` when the chance agreement is 1 (each rater gave one verdict only)."""
    total = both_pass + first_only + second_only + both_fail
    if total <= 0:
        return math.nan
    observed = (both_pass + both_fail) / total
    first_pass = (both_pass + first_only) / total
    second_pass = (both_pass + second_only) / total
    chance = first_pass * second_pass + (1 - first_pass) * (1 - second_pass)
    if chance >= 1.0:
        return math.nan
    return (observed - chance) / (1 - chance)


def rogan_gladen(raw: Value, sensitivity: Value, specificity: Value) -> Value:
    """The true rate behind an observed rate ``raw`` of a test with ``sensitivity`` and
    ``specificity`` (Rogan and Gladen, 1978): ``(raw + sp − 1) / (se + sp − 1)``, clipped
    to [0, 1]; ``nan`` where the test is no better than chance (``se + sp ≤ 1``). Works on
    floats and on numpy arrays alike."""
    denominator = np.asarray(sensitivity + specificity - 1.0, dtype=np.float64)
    numerator = np.asarray(raw + specificity - 1.0, dtype=np.float64)
    safe = np.where(denominator > 0, denominator, 1.0)
    corrected = np.where(denominator > 0, np.clip(numerator / safe, 0.0, 1.0), np.nan)
    if corrected.ndim == 0:
        return float(corrected)  # type: ignore[return-value]
    return corrected  # type: ignore[return-value]
