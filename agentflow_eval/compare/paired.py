"""The overall change in pass rate between two runs, paired by case.

Trials are clustered within cases: two trials of one case share its difficulty, so
treating a run's 1,000 trials as 1,000 independent coin flips understates the
uncertainty. Following Miller (2024), "Adding Error Bars to Evals: A Statistical Approach
to Language Model Evaluations" (arXiv:2411.00640), the case is the unit of analysis and
the two runs are paired by case:

- each case's pass rate on each side (passes over countable trials, so every case weighs
  the same whatever its number of trials), and its difference ``d_i = candidate -
  baseline``;
- the overall change is the mean of the ``d_i`` over the ``m`` cases both runs have;
- its standard error is the case-level (clustered) one, ``sd(d_i) / sqrt(m)``: the
  spread of the per-case differences already holds both the within-case trial noise and
  the differences between cases, and pairing removes the case difficulty both runs
  share;
- the interval is ``mean ± t(1 - α/2, m - 1) × SE``, Student's t with ``m - 1`` degrees
  of freedom (Miller's 1.96 is its large-``m`` limit; a few dozen cases is not large),
  cut to ±1: with two cases ``t`` is 12.7 and the interval would otherwise claim changes
  of several hundred points.

One guard: the variance of each ``d_i`` is the spread of the cases' true changes plus
its trial-sampling variance, so ``sd(d_i)`` estimates something at least as large as the
mean trial-sampling variance, yet with discrete pass counts and few cases it can come out
below it, even at zero (two cases that both went from 5/5 to 4/5), and the interval
would claim a certainty the trials do not hold. The standard error used is the larger of
the clustered one and the one the trials alone imply (per case, the unbiased
``p(1 - p) / (n - 1)`` on each side): the method-of-moments estimate with the between-case
part truncated at zero, as random-effects meta-analysis does (DerSimonian and Laird,
1986). It errs on the side of fewer false regressions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CasePair", "PairedChange", "paired_change"]


@dataclass(frozen=True)
class CasePair:
    """One case's countable trials on both sides (``n`` at least 1 on each)."""

    passed_b: int
    n_b: int
    passed_c: int
    n_c: int

    @property
    def rate_b(self) -> float:
        return self.passed_b / self.n_b

    @property
    def rate_c(self) -> float:
        return self.passed_c / self.n_c

    def trial_variance(self) -> float:
        """An unbiased estimate of the trial-sampling variance of the case's difference:
        ``p(1 - p) / (n - 1)`` per side; a side with one trial, which cannot estimate
        it, counts the most a single trial's variance can be (1/4)."""

        def side(passed: int, n: int) -> float:
            if n < 2:
                return 0.25
            rate = passed / n
            return rate * (1 - rate) / (n - 1)

        return side(self.passed_b, self.n_b) + side(self.passed_c, self.n_c)


@dataclass(frozen=True)
class PairedChange:
    """The mean per-case pass rates, their paired difference, its standard error (the
    larger of the clustered and the trial-sampling one, both kept), its two-sided
    ``1 - alpha`` interval and p-value (Student's t, ``cases - 1`` degrees of freedom).
    With one case there is no interval: ``standard_error`` and the rest are None."""

    cases: int
    baseline_rate: float
    candidate_rate: float
    change: float
    clustered_se: float | None
    trial_se: float
    standard_error: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    alpha: float


def paired_change(pairs: Sequence[CasePair], alpha: float) -> PairedChange:
    """The overall change over ``pairs`` (at least one) at level ``alpha``."""
    from scipy import stats

    if not pairs:
        raise ValueError("no cases in common: nothing to pair")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    m = len(pairs)
    differences = [pair.rate_c - pair.rate_b for pair in pairs]
    change = math.fsum(differences) / m
    baseline_rate = math.fsum(pair.rate_b for pair in pairs) / m
    candidate_rate = math.fsum(pair.rate_c for pair in pairs) / m
    trial_se = math.sqrt(math.fsum(pair.trial_variance() for pair in pairs)) / m
    if m < 2:
        return PairedChange(
            m, baseline_rate, candidate_rate, change, None, trial_se, None, None, None, None, alpha
        )
    variance = math.fsum((d - change) ** 2 for d in differences) / (m - 1)
    clustered_se = math.sqrt(variance / m)
    se = max(clustered_se, trial_se)
    critical = float(stats.t.ppf(1 - alpha / 2, m - 1))
    p_value = float(2 * stats.t.sf(abs(change) / se, m - 1)) if se > 0 else 1.0
    return PairedChange(
        cases=m,
        baseline_rate=baseline_rate,
        candidate_rate=candidate_rate,
        change=change,
        clustered_se=clustered_se,
        trial_se=trial_se,
        standard_error=se,
        # a change of pass rates lies within ±1 (±100 pts): with few cases the t interval
        # reaches far past that, and is cut to what is possible
        ci_low=max(change - critical * se, -1.0),
        ci_high=min(change + critical * se, 1.0),
        p_value=p_value,
        alpha=alpha,
    )
