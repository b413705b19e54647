"""Per-case exact tests on pass counts, and Holm's correction across the cases of a run.

A case gives two binomial samples: ``passed_b`` of ``n_b`` countable trials in the
baseline, ``passed_c`` of ``n_c`` in the candidate. Did the pass rate change?

**Boschloo's exact test** (:func:`scipy.stats.boschloo_exact`), one-sided in each
direction. Why not Fisher's: Fisher's test conditions on the total number of passes,
which is not fixed by the design (each side's number of trials is; its passes are not),
so its p-values are discrete and conservative, badly so at the few trials per case an
agent eval affords. Boschloo's test orders tables by Fisher's p-value but computes the
p-value unconditionally (the largest probability of so extreme a table over the unknown
common pass rate), which keeps it exact, level-α for every pass rate, and uniformly more
powerful than Fisher's. At 5 runs per side the smallest Fisher p-value is 1/252 ≈ 0.004
(5/5 against 0/5), which no correction over 20 cases lets through; Boschloo's is
1/1024. Its cost grows with ``n_b × n_c``; above :data:`BOSCHLOO_MAX_TABLE` (more than
50 trials per side) the two tests nearly agree and Fisher's exact test
(:func:`scipy.stats.fisher_exact`) is used instead; each result names its test.

The reported p-value is two-sided: twice the one-sided p-value in the direction of the
observed change, capped at 1: scipy's two-sided Boschloo p-value, which doubles the
smaller one-sided p-value, and the observed direction's is the smaller (tested). A case
is significant when its Holm-adjusted p-value is at most α, so each direction is tested
at α/2.

**Holm's step-down correction** (:func:`holm`) across the cases, not Benjamini–Hochberg.
A regression gate fails a build (and alerts a team) when *any* case regressed, so the
error to bound is the chance of even one false regression per comparison: the
family-wise error rate, which Holm controls at α whatever the other cases did and
however they depend on each other. Benjamini–Hochberg bounds only the expected share of
false findings among the findings; its threshold loosens as true findings accumulate, so
a night where many cases genuinely *improved* would let noise in other cases through as
regressions. Holm is uniformly more powerful than Bonferroni and needs no assumption.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

__all__ = [
    "BOSCHLOO_MAX_TABLE",
    "Alternative",
    "ExactTest",
    "TestMethod",
    "choose_method",
    "exact_test",
    "holm",
    "one_sided_p_value",
]

BOSCHLOO_MAX_TABLE = 2_500
"""Largest ``n_b * n_c`` tested with Boschloo's test; larger cases use Fisher's."""

TestMethod = Literal["boschloo", "fisher"]
Alternative = Literal["less", "greater"]
"""``less``: the candidate's pass rate is below the baseline's (a regression)."""


@dataclass(frozen=True)
class ExactTest:
    """A case's exact test: the two-sided p-value, the direction of the observed change
    (-1 down, 0 none, +1 up) and the test used."""

    p_value: float
    direction: int
    method: TestMethod


def choose_method(n_b: int, n_c: int) -> TestMethod:
    """The test used for a case with ``n_b`` and ``n_c`` countable trials."""
    return "boschloo" if n_b * n_c <= BOSCHLOO_MAX_TABLE else "fisher"


def _check_counts(passed: int, n: int, side: str) -> None:
    if n < 1 or not 0 <= passed <= n:
        raise ValueError(f"{side}: need 0 <= passed <= runs and runs >= 1, got {passed}/{n}")


@lru_cache(maxsize=1 << 16)
def one_sided_p_value(
    passed_b: int, n_b: int, passed_c: int, n_c: int, alternative: Alternative
) -> float:
    """The one-sided p-value of the case's test (see :func:`choose_method`); ``less`` tests
    whether the candidate's pass rate is lower than the baseline's. Cached: the same
    counts recur across cases and repeated comparisons."""
    from scipy import stats

    _check_counts(passed_b, n_b, "baseline")
    _check_counts(passed_c, n_c, "candidate")
    # scipy's layout: one column per sample, passes in the first row; "less" means the
    # first column's (the candidate's) success probability is the lower one.
    table = [[passed_c, passed_b], [n_c - passed_c, n_b - passed_b]]
    if choose_method(n_b, n_c) == "boschloo":
        p_value = stats.boschloo_exact(table, alternative=alternative).pvalue
    else:
        p_value = stats.fisher_exact(table, alternative=alternative).pvalue
    return min(1.0, max(0.0, float(p_value)))


def exact_test(passed_b: int, n_b: int, passed_c: int, n_c: int) -> ExactTest:
    """The two-sided exact test of a case's change in pass rate."""
    _check_counts(passed_b, n_b, "baseline")
    _check_counts(passed_c, n_c, "candidate")
    # compare passed_c / n_c with passed_b / n_b without rounding
    difference = passed_c * n_b - passed_b * n_c
    direction = (difference > 0) - (difference < 0)
    if direction < 0:
        one_sided = one_sided_p_value(passed_b, n_b, passed_c, n_c, "less")
    elif direction > 0:
        one_sided = one_sided_p_value(passed_b, n_b, passed_c, n_c, "greater")
    else:
        one_sided = min(
            one_sided_p_value(passed_b, n_b, passed_c, n_c, "less"),
            one_sided_p_value(passed_b, n_b, passed_c, n_c, "greater"),
        )
    return ExactTest(min(1.0, 2.0 * one_sided), direction, choose_method(n_b, n_c))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: sorted ascending, the i-th smallest
    (from 0) is multiplied by ``m - i``, then made non-decreasing and capped at 1.
    Rejecting every adjusted p-value at most α keeps the family-wise error rate at α."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
