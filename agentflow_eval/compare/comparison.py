"""Comparing a candidate run with its baseline: :func:`compare_runs`.

Counts: a case's countable trials are its runs minus its infrastructure errors (provider
faults after retries are nobody's verdict on the agent), on both sides alike. Cases in
both runs with countable trials on both sides are *tested*: each gets an exact test
(:mod:`~agentflow_eval.compare.exact`), Holm-corrected across them, and together they
give the paired overall change (:mod:`~agentflow_eval.compare.paired`) and the power
summary (:mod:`~agentflow_eval.compare.power`). Cases in one run only are ``added`` or
``removed`` and take no part in the statistics.

Efficiency: every case in both runs whose trials' figures both sides kept is compared
in cost, tokens, latency and tool calls (:mod:`~agentflow_eval.compare.efficiency`);
a case that regressed, in pass rate or significantly in some measure, shows where its
trajectories part ways (:mod:`~agentflow_eval.compare.divergence`).
"""

from __future__ import annotations

import math
import statistics
from functools import lru_cache

from agentflow_eval.compare.agreement import judge_agreement_changes
from agentflow_eval.compare.criteria import criterion_changes
from agentflow_eval.compare.divergence import case_divergence
from agentflow_eval.compare.efficiency import WORSE, CaseFigures, compare_efficiency
from agentflow_eval.compare.exact import choose_method, exact_test, holm
from agentflow_eval.compare.models import (
    CaseComparison,
    CaseCounts,
    ChangeVerdict,
    Comparison,
    EfficiencyComparison,
    OverallChange,
    Pairing,
    PowerSummary,
    RunInfo,
    SequentialSummary,
    Verdict,
)
from agentflow_eval.compare.paired import CasePair, paired_change
from agentflow_eval.compare.power import (
    TARGET_POWER,
    minimum_detectable_drop,
    power_method,
    regression_power,
    runs_needed,
)
from agentflow_eval.compare.sequential import Design, sequential_summary
from agentflow_eval.errors import InputError
from agentflow_eval.models.results import CaseResult, RunResult
from agentflow_eval.models.tolerances import EfficiencyTolerances

__all__ = ["DEFAULT_ALPHA", "DEFAULT_DETECT_DROP", "ComparisonError", "compare_runs"]

DEFAULT_ALPHA = 0.05
DEFAULT_DETECT_DROP = 0.2


class ComparisonError(InputError):
    """Two runs that cannot be compared (different eval sets, inconsistent counts)."""


def _counts(case: CaseResult, side: str) -> CaseCounts:
    countable = case.runs - case.infrastructure_errors - case.not_evaluated
    if countable < 0 or not 0 <= case.passed <= countable:
        raise ComparisonError(
            f"{side}: case {case.case_id!r}: inconsistent counts (runs {case.runs}, passed "
            f"{case.passed}, infrastructure_errors {case.infrastructure_errors}, "
            f"not_evaluated {case.not_evaluated})"
        )
    return CaseCounts(
        passed=case.passed,
        runs=countable,
        infrastructure_errors=case.infrastructure_errors,
        not_evaluated=case.not_evaluated,
        pass_rate=case.passed / countable if countable else None,
    )


def _by_id(run: RunResult, side: str) -> dict[str, CaseResult]:
    cases: dict[str, CaseResult] = {}
    for case in run.cases:
        if case.case_id in cases:
            raise ComparisonError(f"{side}: case {case.case_id!r} appears twice")
        cases[case.case_id] = case
    return cases


def _run_info(run: RunResult, source: str) -> RunInfo:
    return RunInfo(
        source=source,
        run_id=run.run_id,
        eval_set_id=run.eval_set_id,
        eval_set_name=run.eval_set_name,
        agent=run.agent,
        agent_model=run.agent_model,
        started_at=run.started_at,
        runs_per_case=run.runs_per_case,
        simulated=run.simulated,
    )


def _untestable_note(baseline: CaseCounts, candidate: CaseCounts) -> str:
    sides = [
        f"{name} ({counts.infrastructure_errors} infrastructure error(s))"
        for name, counts in (("baseline", baseline), ("candidate", candidate))
        if counts.runs == 0
    ]
    return f"not tested: no countable trial in the {' and the '.join(sides)}"


def _power(pairs: list[CasePair], alpha: float, detect_drop: float) -> PowerSummary | None:
    """The power summary for the tested cases: at the median countable trials per case
    on each side and the baseline's mean pass rate over those cases."""
    if not pairs:
        return None
    m = len(pairs)
    n_b = max(1, round(statistics.median(pair.n_b for pair in pairs)))
    n_c = max(1, round(statistics.median(pair.n_c for pair in pairs)))
    reference = math.fsum(pair.rate_b for pair in pairs) / m
    return _power_summary(reference, n_b, n_c, m, alpha, detect_drop).model_copy()


@lru_cache(maxsize=1024)
def _power_summary(
    reference: float, n_b: int, n_c: int, m: int, alpha: float, detect_drop: float
) -> PowerSummary:
    level = alpha / (2 * m)
    needed = runs_needed(reference, detect_drop, level)
    possible = 0 < detect_drop <= reference
    return PowerSummary(
        alpha=alpha,
        target_power=TARGET_POWER,
        cases_tested=m,
        runs_baseline=n_b,
        runs_candidate=n_c,
        reference_pass_rate=reference,
        level=level,
        test=choose_method(n_b, n_c),
        method=power_method(n_b, n_c),
        minimum_detectable_drop=minimum_detectable_drop(reference, n_b, n_c, level),
        minimum_detectable_drop_alone=minimum_detectable_drop(reference, n_b, n_c, alpha / 2),
        minimum_detectable_drop_from_full=minimum_detectable_drop(1.0, n_b, n_c, level),
        detect_drop=detect_drop,
        power_at_detect_drop=(
            regression_power(reference, reference - detect_drop, n_b, n_c, level)
            if possible
            else None
        ),
        runs_needed=needed.runs if needed else None,
        runs_needed_method=needed.method if needed else None,
        runs_needed_exceeds=needed.exceeds if needed else False,
    )


def compare_runs(
    baseline: RunResult,
    candidate: RunResult,
    *,
    alpha: float = DEFAULT_ALPHA,
    detect_drop: float = DEFAULT_DETECT_DROP,
    allow_different_eval_sets: bool = False,
    baseline_source: str = "",
    candidate_source: str = "",
    tolerances: EfficiencyTolerances | None = None,
    pairing: Pairing | None = None,
    design: Design | None = None,
) -> Comparison:
    """Compare ``candidate`` with ``baseline``. Only the runs' summaries are read
    (``cases``, ``criteria``, the run's identity), so runs read without their trials
    (:func:`~agentflow_eval.compare.sides.load_side`) compare the same as full ones.

    ``alpha``: the significance level (two-sided; a case's or the overall change is
    called at ``alpha``). ``detect_drop``: the drop in pass rate the power summary plans
    runs for. ``tolerances``: the efficiency increases a regression gate tolerates
    (none given: efficiency is reported, never a regression). ``pairing``: whether the
    runs were made apart or side by side (what efficiency can then call, see
    :mod:`~agentflow_eval.compare.efficiency`; by default, side by side when the runs
    name each other as their pair). Runs made side by side are judged case by case from
    their pairs (:mod:`~agentflow_eval.compare.sequential`, with ``design``'s clearing
    drop and cap), and overall on the first round's pairs alone. Raises
    :class:`ComparisonError` for runs of different eval sets (unless
    ``allow_different_eval_sets``) and for inconsistent counts.
    """
    if not 0 < alpha < 1:
        raise ComparisonError(f"alpha must be between 0 and 1, got {alpha}")
    if not 0 < detect_drop <= 1:
        raise ComparisonError(f"the drop to detect must be within (0, 1], got {detect_drop}")
    notes: list[str] = []
    if baseline.eval_set_id != candidate.eval_set_id:
        if not allow_different_eval_sets:
            raise ComparisonError(
                f"different eval sets: the baseline ran {baseline.eval_set_id!r}, the "
                f"candidate {candidate.eval_set_id!r} (allow it with "
                "--allow-different-eval-sets; only cases with the same id are paired)"
            )
        notes.append(
            f"different eval sets ({baseline.eval_set_id} → {candidate.eval_set_id}): "
            "cases are paired by id"
        )
    before, after = _by_id(baseline, "baseline"), _by_id(candidate, "candidate")
    if pairing is None:
        pairing = "paired" if _made_together(baseline, candidate) else "apart"
    first_round = candidate.runs_per_case if pairing == "paired" else None

    cases: list[CaseComparison] = []
    tested: list[tuple[int, CasePair]] = []  # (index in cases, pair)
    figures: list[CaseFigures] = []
    untested = 0
    for case_id in [*before, *(case_id for case_id in after if case_id not in before)]:
        old, new = before.get(case_id), after.get(case_id)
        if old is None or new is None:
            present = new if old is None else old
            assert present is not None
            counts = _counts(present, "candidate" if old is None else "baseline")
            cases.append(
                CaseComparison(
                    case_id=case_id,
                    label=present.label,
                    verdict="added" if old is None else "removed",
                    baseline=None if old is None else counts,
                    candidate=counts if old is None else None,
                    criteria=criterion_changes(
                        old.criteria if old else [], new.criteria if new else []
                    ),
                )
            )
            continue
        b, c = _counts(old, "baseline"), _counts(new, "candidate")
        if first_round is not None:  # the overall and the exact test: the first round's
            b = _first_round_counts(old, first_round) or b
            c = _first_round_counts(new, first_round) or c
        comparison = CaseComparison(
            case_id=case_id,
            label=new.label or old.label,
            verdict="no significant change",
            baseline=b,
            candidate=c,
            criteria=criterion_changes(old.criteria, new.criteria),
        )
        if old.trial_figures and new.trial_figures:
            figures.append(CaseFigures(case_id, old.trial_figures, new.trial_figures))
        if b.runs and c.runs:
            assert b.pass_rate is not None and c.pass_rate is not None
            result = exact_test(b.passed, b.runs, c.passed, c.runs)
            comparison.change = c.pass_rate - b.pass_rate
            comparison.p_value = result.p_value
            comparison.test = result.method
            tested.append((len(cases), CasePair(b.passed, b.runs, c.passed, c.runs)))
        else:
            comparison.note = _untestable_note(b, c)
            untested += 1
        cases.append(comparison)

    adjusted = holm([cases[index].p_value or 1.0 for index, _ in tested])
    for (index, _pair), p_adjusted in zip(tested, adjusted, strict=True):
        case = cases[index]
        case.p_adjusted = p_adjusted
        if p_adjusted <= alpha and case.change:
            case.verdict = "regression" if case.change < 0 else "improvement"
    sequential = None
    if pairing == "paired":
        sequential = _sequential(before, after, cases, alpha, design, candidate, notes)

    efficiency = _efficiency(
        cases, figures, alpha, tolerances or EfficiencyTolerances(), notes, pairing
    )

    pairs = [pair for _, pair in tested]
    overall = _overall(cases, pairs, alpha)
    if untested:
        notes.append(f"{untested} case(s) in both runs not tested: no countable trial on a side")
    infra_b = sum(case.baseline.infrastructure_errors for case in cases if case.baseline)
    infra_c = sum(case.candidate.infrastructure_errors for case in cases if case.candidate)
    if infra_b or infra_c:
        notes.append(
            f"trials that failed for infrastructure reasons are left out: {infra_b} in the "
            f"baseline, {infra_c} in the candidate"
        )
    return Comparison(
        alpha=alpha,
        pairing=pairing,
        baseline=_run_info(baseline, baseline_source),
        candidate=_run_info(candidate, candidate_source),
        overall=overall,
        cases=cases,
        criteria=criterion_changes(baseline.criteria, candidate.criteria),
        power=_power(pairs, alpha, detect_drop),
        sequential=sequential,
        efficiency=efficiency,
        judge_agreement=judge_agreement_changes(baseline, candidate),
        regressed=overall.verdict == "regression"
        or any(case.verdict == "regression" for case in cases)
        or (efficiency is not None and efficiency.regressed),
        notes=notes,
    )


def _made_together(baseline: RunResult, candidate: RunResult) -> bool:
    """Whether the two runs are the two sides of one paired run."""
    return (
        candidate.paired_with is not None and candidate.paired_with.run_id == baseline.run_id
    ) or (baseline.paired_with is not None and baseline.paired_with.run_id == candidate.run_id)


def _first_round_counts(case: CaseResult, first_round: int) -> CaseCounts | None:
    """A paired case's counts over its first round of trials alone (``None`` when its
    figures keep no pass values)."""
    values = [
        figure.pass_value
        for figure in case.trial_figures
        if figure.trial_index < first_round and figure.pass_value is not None
    ]
    if not any(figure.pass_value is not None for figure in case.trial_figures):
        return None
    passed = sum(1 for value in values if value > 0.5)
    return CaseCounts(
        passed=passed, runs=len(values), pass_rate=passed / len(values) if values else None
    )


def _sequential(
    before: dict[str, CaseResult],
    after: dict[str, CaseResult],
    cases: list[CaseComparison],
    alpha: float,
    design: Design | None,
    candidate: RunResult,
    notes: list[str],
) -> SequentialSummary | None:
    """Each paired case's verdict from its pairs (set on its comparison too: a
    regression is its e-value's, not the first round's exact test), or None without pass
    values to pair."""
    pairs: dict[str, list[tuple[int, float, float]]] = {}
    rates: dict[str, float] = {}
    for case_id, old in before.items():
        new = after.get(case_id)
        if new is None:
            continue
        values = {f.trial_index: f.pass_value for f in new.trial_figures}
        found = [
            (f.trial_index, f.pass_value, values[f.trial_index])
            for f in old.trial_figures
            if f.pass_value is not None and values.get(f.trial_index) is not None
        ]
        if found:
            pairs[case_id] = [(i, b, c) for i, b, c in found if c is not None]
            rates[case_id] = sum(b for _, b, _ in found) / len(found)
    if not pairs:
        notes.append("the paired runs keep no pass values per trial: no per-case sequential test")
        return None
    chosen = design if design is not None else Design(alpha=alpha)
    adaptive = candidate.paired_with is not None and candidate.paired_with.adaptive
    summary = sequential_summary(
        pairs, chosen, adaptive=adaptive, first_round=candidate.runs_per_case, baseline_rates=rates
    )
    by_id = {case.case_id: case for case in summary.cases}
    verdicts: dict[str, Verdict] = {"regressed": "regression", "improved": "improvement"}
    for case in cases:
        decided = by_id.get(case.case_id)
        if decided is not None:
            case.verdict = verdicts.get(decided.status, "no significant change")
    return summary


def _efficiency(
    cases: list[CaseComparison],
    figures: list[CaseFigures],
    alpha: float,
    tolerances: EfficiencyTolerances,
    notes: list[str],
    pairing: Pairing,
) -> EfficiencyComparison | None:
    """Each case's efficiency and divergence set in ``cases``; the efficiency overall
    (None when no case in both runs kept its trials' figures)."""
    paired = sum(1 for case in cases if case.baseline is not None and case.candidate is not None)
    if paired and len(figures) < paired:
        notes.append(
            f"{paired - len(figures)} case(s) in both runs without per-trial figures on a side "
            "(results written before schema 1.3): their efficiency is not compared"
        )
    if not figures:
        return None
    result = compare_efficiency(figures, alpha, tolerances, pairing=pairing)
    by_id = {case.case_id: case for case in cases}
    for case_figures in figures:
        case = by_id[case_figures.case_id]
        case.efficiency = result.cases[case_figures.case_id]
        worse = any(change.verdict in WORSE for change in case.efficiency.measures)
        if case.verdict == "regression" or worse:
            case.divergence = case_divergence(case_figures.baseline, case_figures.candidate)
    return result.comparison


def _overall(cases: list[CaseComparison], pairs: list[CasePair], alpha: float) -> OverallChange:
    counts = {
        verdict: sum(1 for case in cases if case.verdict == verdict)
        for verdict in ("added", "removed", "regression", "improvement")
    }
    base = OverallChange(
        verdict="no significant change",
        paired_cases=len(pairs),
        added_cases=counts["added"],
        removed_cases=counts["removed"],
        regressed_cases=counts["regression"],
        improved_cases=counts["improvement"],
        confidence=1 - alpha,
    )
    if not pairs:
        base.note = "no case with countable trials in both runs: nothing to compare"
        return base
    change = paired_change(pairs, alpha)
    base.baseline_pass_rate = change.baseline_rate
    base.candidate_pass_rate = change.candidate_rate
    base.change = change.change
    base.trial_se = change.trial_se
    if change.standard_error is None:
        # one case: its exact test is the comparison
        only = next(case for case in cases if case.p_adjusted is not None)
        if only.verdict == "regression":
            base.verdict = "regression"
        elif only.verdict == "improvement":
            base.verdict = "improvement"
        base.p_value = only.p_value
        base.note = "one case in common: the overall verdict is its exact test"
        return base
    base.standard_error = change.standard_error
    base.clustered_se = change.clustered_se
    base.ci_low, base.ci_high = change.ci_low, change.ci_high
    base.p_value = change.p_value
    verdict: ChangeVerdict = "no significant change"
    assert change.ci_low is not None and change.ci_high is not None
    if change.ci_high < 0:
        verdict = "regression"
    elif change.ci_low > 0:
        verdict = "improvement"
    base.verdict = verdict
    return base
