"""Efficiency against the baseline: did a case get slower, costlier, hungrier for tokens
or chattier with its tools, and did the run as a whole?

Each case's trials are read from its summary (``CaseResult.trial_figures``), so a
comparison of runs read without their trials has them.

**Which trials.** Errored trials are left out on both sides: their figures cover only
what they did before they stopped (a provider outage, a timeout, a crash), and a stall
of ours is not the agent's latency; their count is kept (``errored_baseline``,
``errored_candidate``). Whether the agent got worse at finishing is the pass rate's
question. A measure is tested in a case with at least :data:`MIN_TRIALS` finished
trials on each side. Cost is tested only when every finished trial on both sides has a
known cost (``cost_usd`` set): a price missing on one side would compare a partial sum
with a whole one; such a case says so in its note and is left out of the overall cost.

**Per case** the trials' values on each side are compared with the two-sided
**Mann–Whitney U test** (the Wilcoxon rank-sum test, as :func:`scipy.stats.mannwhitneyu`
computes it):
latencies and costs are skewed with long tails, token and tool-call counts are
discrete, and a rank test assumes no distribution. scipy computes it exactly when
there are no ties and at most 8 trials a side, else by the normal approximation with
the tie correction and the continuity correction. Per measure, the p-values are
Holm-corrected across the cases tested (as the pass rates are, see
:mod:`~agentflow_eval.compare.exact`): the chance of even one case falsely called
slower is at most ``alpha``. The direction is the test's own: the candidate is worse
when its trials rank above the baseline's more often than not (``U / (n_b n_c) > ½``).
The size shown is the ratio of the medians.

**Overall**, per measure, the cases are paired: each tested case's ratio of medians
(candidate over baseline; cases with a median of 0 on a side have no ratio and are
left out), and the geometric mean of those ratios with Student's t interval on their
logarithms (``m - 1`` degrees of freedom), taken back by ``exp``: an interval of ratios
that is always above zero. With fewer than two ratios there is no interval: the note
says so.

**Runs made apart, runs made side by side.** The trials of one run share that run's
machine load, provider load and hour, so a test of one run's trials against another's
measures the runs as much as the agents: on a busy machine two runs of the same agent
minutes apart differ in latency by more than their trials say. For runs made apart
(``pairing="apart"``, today's ``compare`` and ``--baseline``) latency is therefore never
called (the figures are shown, the note says why), and cost, tokens and tool calls are
called only beyond :data:`DRIFT_MARGIN` (a provider's silent update moves them run-wide).
Runs made side by side (``pairing="paired"``: trial ``j`` of both agents on a case
started together) share their load pair by pair: each case is tested with the two-sided
**Wilcoxon signed-rank test** on the pairs' differences (:func:`scipy.stats.wilcoxon`),
so the machine's and the provider's drift cancel, and every measure is called.

**Gating.** A change is reported whenever it is significant; it fails a regression gate
only when the team gave a tolerance for its measure
(:class:`~agentflow_eval.models.tolerances.EfficiencyTolerances`) and the change is a
significant increase whose median rose by more than it (per case: its ratio of medians;
overall: the geometric mean ratio). Noise never gates, nor does a significant change
smaller than the tolerance.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from agentflow_eval.compare.exact import holm
from agentflow_eval.compare.models import (
    CaseEfficiency,
    Comparison,
    EfficiencyComparison,
    EfficiencyFinding,
    EfficiencyVerdict,
    MeasureChange,
    OverallEfficiencyChange,
    Pairing,
)
from agentflow_eval.models.results import TrialFigures
from agentflow_eval.models.tolerances import MEASURES, EfficiencyTolerances, Measure

__all__ = [
    "APART_LATENCY_NOTE",
    "DRIFT_MARGIN",
    "MIN_TRIALS",
    "UNITS",
    "VERDICTS",
    "WORSE",
    "CaseFigures",
    "EfficiencyResult",
    "compare_efficiency",
    "efficiency_findings",
    "mann_whitney_u",
    "measure_values",
    "wilcoxon_signed_rank",
]

MIN_TRIALS = 2
"""Finished trials a side needs for a measure to be tested in a case."""

DRIFT_MARGIN = 0.25
"""Runs made apart: a change of cost, tokens or tool calls within this (as a ratio of
medians, either way) is one a run-wide shift could explain, and gets no verdict."""

APART_LATENCY_NOTE = (
    "runs made apart: latency is not called (each run had its own machine and provider "
    "load); run the baseline beside the candidate (--against) to measure it"
)

VERDICTS: dict[Measure, tuple[EfficiencyVerdict, EfficiencyVerdict]] = {
    "latency": ("slower", "faster"),
    "cost": ("costlier", "cheaper"),
    "tokens": ("hungrier", "leaner"),
    "tool_calls": ("chattier", "terser"),
}
"""Per measure, the verdict of a significant increase and of a significant decrease."""

WORSE: frozenset[EfficiencyVerdict] = frozenset(worse for worse, _ in VERDICTS.values())
"""The verdicts of a measure that got worse."""

UNITS: dict[Measure, str] = {
    "latency": "ms",
    "cost": "USD",
    "tokens": "tokens",
    "tool_calls": "tool calls",
}


@dataclass(frozen=True)
class CaseFigures:
    """A case in both runs: the figures of its trials on each side."""

    case_id: str
    baseline: Sequence[TrialFigures]
    candidate: Sequence[TrialFigures]


@dataclass(frozen=True)
class EfficiencyResult:
    """Each case's efficiency (by case id) and the comparison overall."""

    cases: dict[str, CaseEfficiency]
    comparison: EfficiencyComparison


def measure_values(figures: Sequence[TrialFigures], measure: Measure) -> list[float] | None:
    """The values of ``measure`` over ``figures`` (finished trials), or None for a cost
    some trial does not know."""
    if measure == "cost":
        costs = [figure.cost_usd for figure in figures]
        if any(cost is None for cost in costs):
            return None
        return [float(cost) for cost in costs if cost is not None]
    if measure == "tokens":
        return [float(f.input_tokens + f.output_tokens) for f in figures]
    if measure == "latency":
        return [f.latency_ms for f in figures]
    return [float(f.tool_calls) for f in figures]


def _ranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """The ranks of ``values`` (1-based, ties given their mean rank) and the sizes of
    the tied groups."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    ties: list[int] = []
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        if end > start:
            ties.append(end - start + 1)
        start = end + 1
    return ranks, ties


@lru_cache(maxsize=256)
def _exact_u_tail(n_small: int, n_large: int) -> tuple[float, ...]:
    """``P(U >= u)`` for ``u = 0 .. n_small * n_large`` under the null without ties: the
    counts of U are the coefficients of the Gaussian binomial ``[n_small + n_large choose
    n_small]_q``, built as the product of ``(1 - q^(n_large + i)) / (1 - q^i)``."""
    counts = [1]
    for i in range(1, n_small + 1):
        # multiply by (1 - q^(n_large + i)), then divide by (1 - q^i): both exact
        grown = counts + [0] * (n_large + i)
        for k in range(len(grown) - 1, n_large + i - 1, -1):
            grown[k] -= grown[k - n_large - i]
        for k in range(i, len(grown)):
            grown[k] += grown[k - i]
        counts = grown[: i * n_large + 1]  # the degree so far: i * n_large
    total = math.comb(n_small + n_large, n_small)
    tail, running = [0.0] * len(counts), 0
    for u in range(len(counts) - 1, -1, -1):
        running += counts[u]
        tail[u] = running / total
    return tuple(tail)


def mann_whitney_u(baseline: Sequence[float], candidate: Sequence[float]) -> tuple[float, float]:
    """The two-sided Mann–Whitney U p-value of ``candidate`` against ``baseline`` and the
    candidate's probability of superiority ``U_c / (n_b n_c)`` (½: no shift; above ½:
    the candidate's values tend to be larger). Identical samples give p = 1.

    As :func:`scipy.stats.mannwhitneyu` (``method="auto"``, continuity corrected)
    computes it, without its per-call overhead (a comparison makes one test per case and
    measure): exact when there are no ties and a side has at most 8 values, else the
    normal approximation with the tie correction (tested against scipy)."""
    n_b, n_c = len(baseline), len(candidate)
    if not n_b or not n_c or len(set(baseline) | set(candidate)) < 2:
        return 1.0, 0.5
    ranks, ties = _ranks([*baseline, *candidate])
    u_c = math.fsum(ranks[n_b:]) - n_c * (n_c + 1) / 2
    u = max(u_c, n_b * n_c - u_c)
    superiority = u_c / (n_b * n_c)
    if (n_b <= 8 or n_c <= 8) and not ties:
        tail = _exact_u_tail(min(n_b, n_c), max(n_b, n_c))
        return min(1.0, 2 * tail[round(u)]), superiority
    n = n_b + n_c
    tie_term = sum(t**3 - t for t in ties)
    sd = math.sqrt(n_b * n_c / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    z = (u - n_b * n_c / 2 - 0.5) / sd
    return min(1.0, math.erfc(z / math.sqrt(2))), superiority


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def wilcoxon_signed_rank(differences: Sequence[float]) -> tuple[float, float]:
    """The two-sided Wilcoxon signed-rank p-value of ``differences`` (candidate minus
    baseline, pair by pair; zero differences left out) and the share of the rest that
    are positive (½: no shift; above ½: the candidate's values tend to be larger)."""
    from scipy import stats

    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return 1.0, 0.5
    result = stats.wilcoxon(nonzero, alternative="two-sided")
    positive = sum(1 for d in nonzero if d > 0) / len(nonzero)
    return float(result.pvalue), positive


def _paired_values(
    measure: Measure, baseline: Sequence[TrialFigures], candidate: Sequence[TrialFigures]
) -> tuple[list[float], list[float]] | None:
    """The values of ``measure`` of the pairs both sides finished (by trial index), or
    None for a cost some trial does not know."""
    after = {figure.trial_index: figure for figure in candidate}
    pairs = [(b, after[b.trial_index]) for b in baseline if b.trial_index in after]
    before_values = measure_values([b for b, _ in pairs], measure)
    after_values = measure_values([c for _, c in pairs], measure)
    if before_values is None or after_values is None:
        return None
    return before_values, after_values


def _measure_change(
    measure: Measure,
    baseline: Sequence[TrialFigures],
    candidate: Sequence[TrialFigures],
    tolerance: float | None,
    paired: bool = False,
) -> tuple[MeasureChange, float]:
    """The case's change in ``measure`` before Holm's correction, and the candidate's
    probability of superiority (½ when untested)."""
    change = MeasureChange(
        measure=measure,
        baseline_trials=len(baseline),
        candidate_trials=len(candidate),
        tolerance=tolerance,
    )
    if paired:
        both = _paired_values(measure, baseline, candidate)
        before, after = both if both is not None else (None, None)
        if both is not None:
            change.baseline_trials = change.candidate_trials = len(both[0])
    else:
        before, after = measure_values(baseline, measure), measure_values(candidate, measure)
    if before is None or after is None:
        sides = [
            name for name, values in (("baseline", before), ("candidate", after)) if values is None
        ]
        change.note = f"cost not tested: unknown for some trial of the {' and the '.join(sides)}"
        return change, 0.5
    if before:
        change.baseline_median = _median(before)
    if after:
        change.candidate_median = _median(after)
    if len(before) < MIN_TRIALS or len(after) < MIN_TRIALS:
        change.note = f"not tested: fewer than {MIN_TRIALS} finished trials on a side"
        return change, 0.5
    assert change.baseline_median is not None and change.candidate_median is not None
    if change.baseline_median > 0:
        change.ratio = change.candidate_median / change.baseline_median
    if paired:
        differences = [c - b for b, c in zip(before, after, strict=True)]
        change.p_value, superiority = wilcoxon_signed_rank(differences)
        change.test = "wilcoxon-signed-rank"
    else:
        change.p_value, superiority = mann_whitney_u(before, after)
        change.test = "mann-whitney-u"
    return change, superiority


def _within_drift(measure: Measure, ratio: float | None) -> bool:
    """Runs made apart: whether a change to ``ratio`` is one a run-wide shift explains
    (latency always is; the others within :data:`DRIFT_MARGIN`)."""
    if measure == "latency":
        return True
    return ratio is not None and 1 / (1 + DRIFT_MARGIN) <= ratio <= 1 + DRIFT_MARGIN


def _increase_beyond(ratio: float | None, baseline: float | None, tolerance: float) -> bool:
    """Whether a rise to ``ratio`` times the baseline exceeds ``tolerance``; from a
    baseline median of 0 any rise does."""
    if ratio is None:
        return baseline == 0
    return ratio - 1 > tolerance


def _overall(
    measure: Measure,
    changes: Sequence[MeasureChange],
    alpha: float,
    tolerance: float | None,
) -> OverallEfficiencyChange:
    from scipy import stats

    worse, better = VERDICTS[measure]
    overall = OverallEfficiencyChange(
        measure=measure,
        confidence=1 - alpha,
        tolerance=tolerance,
        worse_cases=sum(1 for change in changes if change.verdict == worse),
        better_cases=sum(1 for change in changes if change.verdict == better),
    )
    logs = [
        math.log(change.ratio)
        for change in changes
        if change.test is not None and change.ratio is not None and change.ratio > 0
    ]
    overall.paired_cases = len(logs)
    if not logs:
        overall.note = "no case with a ratio of medians on both sides"
        return overall
    mean = math.fsum(logs) / len(logs)
    overall.ratio = math.exp(mean)
    if len(logs) < 2:
        overall.note = "one case with a ratio of medians: no interval"
        return overall
    se = statistics.stdev(logs) / math.sqrt(len(logs))
    if se == 0:
        overall.ci_low = overall.ci_high = overall.ratio
        overall.p_value = 1.0 if mean == 0 else 0.0
    else:
        critical = float(stats.t.ppf(1 - alpha / 2, len(logs) - 1))
        overall.ci_low = math.exp(mean - critical * se)
        overall.ci_high = math.exp(mean + critical * se)
        overall.p_value = float(2 * stats.t.sf(abs(mean) / se, len(logs) - 1))
    if overall.ci_low > 1:
        overall.verdict = worse
    elif overall.ci_high < 1:
        overall.verdict = better
    overall.beyond_tolerance = (
        tolerance is not None and overall.verdict == worse and overall.ratio - 1 > tolerance
    )
    return overall


def _too_few_trials_note(tested: Sequence[MeasureChange], alpha: float) -> str | None:
    """Say so when no case could be called changed whatever its trials: the smallest
    two-sided p-value of the U test without ties (``2 / C(n_b + n_c, n_b)``: every
    candidate trial above every baseline one) is above Holm's first threshold
    ``alpha / m`` in every tested case (5 trials a side: 2/252, above 0.05/7)."""
    if not tested:
        return None
    m = len(tested)
    smallest = [
        2 / math.comb(change.baseline_trials + change.candidate_trials, change.baseline_trials)
        for change in tested
    ]
    if min(smallest) <= alpha / m:
        return None
    runs = sorted({change.baseline_trials for change in tested})
    return (
        f"with {'/'.join(map(str, runs))} finished trials a side over {m} case(s), no single "
        f"case can be called changed (the smallest Mann–Whitney U p-value, "
        f"{min(smallest):.3g}, is above alpha/{m}); only the overall change can show: "
        "more runs per case would let a case show"
    )


def compare_efficiency(
    cases: Sequence[CaseFigures],
    alpha: float,
    tolerances: EfficiencyTolerances,
    *,
    pairing: Pairing = "apart",
) -> EfficiencyResult:
    """Each case's efficiency and each measure overall (see the module): ``pairing`` says
    whether the runs were made apart or side by side."""
    paired = pairing == "paired"
    result: dict[str, CaseEfficiency] = {}
    superiority: dict[tuple[str, Measure], float] = {}
    for case in cases:
        finished_b = [figure for figure in case.baseline if not figure.errored]
        finished_c = [figure for figure in case.candidate if not figure.errored]
        efficiency = CaseEfficiency(
            errored_baseline=len(case.baseline) - len(finished_b),
            errored_candidate=len(case.candidate) - len(finished_c),
        )
        for measure in MEASURES:
            change, shift = _measure_change(
                measure, finished_b, finished_c, tolerances.of(measure), paired
            )
            efficiency.measures.append(change)
            superiority[case.case_id, measure] = shift
        result[case.case_id] = efficiency

    overall: list[OverallEfficiencyChange] = []
    for index, measure in enumerate(MEASURES):
        tested = [
            (case_id, efficiency.measures[index])
            for case_id, efficiency in result.items()
            if efficiency.measures[index].test is not None
        ]
        adjusted = holm([change.p_value or 1.0 for _, change in tested])
        worse, better = VERDICTS[measure]
        tolerance = tolerances.of(measure)
        for (case_id, change), p_adjusted in zip(tested, adjusted, strict=True):
            change.p_adjusted = p_adjusted
            shift = superiority[case_id, measure]
            if p_adjusted <= alpha and shift != 0.5:
                if paired or not _within_drift(measure, change.ratio):
                    change.verdict = worse if shift > 0.5 else better
                else:
                    change.note = _drift_note(measure)
            change.beyond_tolerance = (
                tolerance is not None
                and change.verdict == worse
                and _increase_beyond(change.ratio, change.baseline_median, tolerance)
            )
        whole = _overall(measure, [change for _, change in tested], alpha, tolerances.of(measure))
        if (
            not paired
            and whole.verdict != "no significant change"
            and _within_drift(measure, whole.ratio)
        ):
            whole.verdict = "no significant change"
            whole.beyond_tolerance = False
            whole.note = _drift_note(measure)
        overall.append(whole)

    notes: list[str] = []
    if not paired:
        notes.append(
            f"{APART_LATENCY_NOTE}; cost, tokens and tool calls are called only beyond "
            f"{DRIFT_MARGIN:.0%} either way"
        )
    blind = _too_few_trials_note(
        [
            change
            for efficiency in result.values()
            for change in efficiency.measures
            if change.measure == "latency" and change.test is not None
        ],
        alpha,
    )
    if blind:
        notes.append(blind)
    untested_cost = sum(
        1
        for efficiency in result.values()
        for change in efficiency.measures
        if change.measure == "cost" and change.test is None
    )
    if untested_cost:
        notes.append(f"cost not tested in {untested_cost} case(s): see each case's note")
    errored_b = sum(efficiency.errored_baseline for efficiency in result.values())
    errored_c = sum(efficiency.errored_candidate for efficiency in result.values())
    if errored_b or errored_c:
        notes.append(
            f"errored trials are left out of the efficiency tests: {errored_b} in the "
            f"baseline, {errored_c} in the candidate"
        )
    regressed = any(
        change.beyond_tolerance for efficiency in result.values() for change in efficiency.measures
    ) or any(change.beyond_tolerance for change in overall)
    return EfficiencyResult(
        cases=result,
        comparison=EfficiencyComparison(
            test="wilcoxon-signed-rank" if paired else "mann-whitney-u",
            pairing=pairing,
            drift_margin=None if paired else DRIFT_MARGIN,
            tolerances=tolerances,
            overall=overall,
            regressed=regressed,
            notes=notes,
        ),
    )


def _drift_note(measure: Measure) -> str:
    if measure == "latency":
        return APART_LATENCY_NOTE
    return (
        f"runs made apart: within {DRIFT_MARGIN:.0%}, a run-wide shift could explain it; "
        "not called (run them side by side, --against, to measure it)"
    )


def efficiency_findings(comparison: Comparison) -> list[EfficiencyFinding]:
    """The comparison's significant efficiency changes for the worse: each measure
    overall, then each case's."""
    if comparison.efficiency is None:
        return []
    changes: list[tuple[str | None, MeasureChange | OverallEfficiencyChange]] = [
        (None, change) for change in comparison.efficiency.overall
    ]
    for case in comparison.cases:
        if case.efficiency is not None:
            changes += [(case.case_id, change) for change in case.efficiency.measures]
    return [
        EfficiencyFinding(
            case_id=case_id,
            measure=change.measure,
            verdict=change.verdict,
            ratio=change.ratio,
            baseline_median=getattr(change, "baseline_median", None),
            candidate_median=getattr(change, "candidate_median", None),
            p_adjusted=change.p_adjusted if isinstance(change, MeasureChange) else change.p_value,
            tolerance=change.tolerance,
            beyond_tolerance=change.beyond_tolerance,
        )
        for case_id, change in changes
        if change.verdict in WORSE
    ]
