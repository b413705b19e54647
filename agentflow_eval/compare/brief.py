"""A run's comparison with its baseline in a few plain lines: the scorecard's block, the
flow's log. The full table is ``agentflow-eval compare`` (and the report's section)."""

from __future__ import annotations

from agentflow_eval.compare.models import (
    CaseComparison,
    CaseCounts,
    Comparison,
    RunComparison,
    SequentialCase,
    SequentialSummary,
)
from agentflow_eval.compare.render import (
    efficiency_changes,
    format_divergence,
    format_efficiency_overall,
    format_measure_change,
    format_overall,
    format_p,
    format_power,
    worse_verdicts,
)
from agentflow_eval.files.naming import printable
from agentflow_eval.models.agreement import Estimate

__all__ = [
    "CHANGED_CASES_SHOWN",
    "case_change_text",
    "comparison_lines",
    "efficiency_lines",
    "judge_agreement_lines",
    "sequential_case_text",
    "sequential_lines",
]

CHANGED_CASES_SHOWN = 10
"""Regressed (then improved) cases listed by name; the rest are counted."""


def _counts(counts: CaseCounts | None) -> str:
    return "-" if counts is None else f"{counts.passed}/{counts.runs}"


def case_change_text(case: CaseComparison) -> str:
    """``case_id 5/5 -> 1/5 (-80 pts, p 0.016)``: a changed case in one line."""
    shown = printable(case.case_id, keep_newlines=False)
    text = f"{shown} {_counts(case.baseline)} -> {_counts(case.candidate)}"
    if case.change is not None:
        shown = format_p(case.p_adjusted)
        text += f" ({100 * case.change:+.0f} pts, p {shown} Holm)"
    return text


def efficiency_lines(comparison: Comparison) -> list[str]:
    """The efficiency facts, unindented, in ``agentflow-eval compare``'s wording: each
    significant per-case change (measure, medians, ratio, the test, the verdict), each
    measure that changed overall (or went beyond its tolerance), and where the paths of
    the cases that got worse part ways. Empty when nothing changed."""
    if comparison.efficiency is None:
        return []
    changes = [
        f"efficiency: {printable(case.case_id, keep_newlines=False)}: "
        + format_measure_change(change)
        for case in comparison.cases
        for change in efficiency_changes(case)
    ]
    lines = changes[:CHANGED_CASES_SHOWN]
    if len(changes) > CHANGED_CASES_SHOWN:
        lines.append(f"efficiency: and {len(changes) - CHANGED_CASES_SHOWN} more case measures")
    lines.extend(
        f"efficiency overall: {format_efficiency_overall(change)}"
        for change in comparison.efficiency.overall
        if change.verdict != "no significant change" or change.beyond_tolerance
    )
    lines.extend(
        f"diverged: {printable(case.case_id, keep_newlines=False)} "
        f"({', '.join(worse_verdicts(case))}): {format_divergence(divergence)}"
        for case in comparison.cases
        for divergence in case.divergence
    )
    return lines


def _interval(case: SequentialCase) -> str:
    if case.ci_low is None or case.ci_high is None:
        return ""
    low, high = 100 * case.ci_low, 100 * case.ci_high
    return f", change {100 * (case.change or 0):+.0f} pts (CI {low:+.0f} to {high:+.0f})"


def sequential_case_text(case: SequentialCase) -> str:
    """``case_id regressed: e 1,893 after 14 pairs (14 discordant), change -100 pts (CI
    -100 to -37)``."""
    shown = printable(case.case_id, keep_newlines=False)
    return (
        f"{shown} {case.status}: e {case.e_value:,.4g} after {case.pairs} pairs "
        f"({case.discordant} discordant){_interval(case)}"
    )


def sequential_lines(summary: SequentialSummary) -> list[str]:
    """A paired run's per-case verdicts in a few lines: what was spent (against what a
    fixed design would need), the counts by status, and the cases not cleared."""
    counts = ", ".join(f"{n} {status}" for status, n in summary.counts.items() if n)
    budget = f" of {summary.max_trials:,} budgeted" if summary.max_trials else ""
    fixed = (
        f"; a fixed design finding a {100 * summary.clear_drop:.0f}-pt drop in every case "
        f"needs {summary.fixed_design_trials:,}"
        if summary.fixed_design_trials
        else ""
    )
    mode = "adaptive, pairs added where undecided" if summary.adaptive else "one round"
    lines = [
        f"paired cases ({mode}; betting e-values, flagged at e >= {summary.threshold:,.0f}): "
        f"{counts}; {summary.trials:,} trials{budget}{fixed}"
    ]
    order = {"regressed": 0, "improved": 1, "undecided": 2, "capped": 3, "cleared": 4}
    shown = sorted(
        (case for case in summary.cases if case.status != "cleared"),
        key=lambda case: (order[case.status], -case.e_value, case.case_id),
    )
    lines.extend(f"  {sequential_case_text(case)}" for case in shown[:CHANGED_CASES_SHOWN])
    if len(shown) > CHANGED_CASES_SHOWN:
        lines.append(f"  and {len(shown) - CHANGED_CASES_SHOWN} more not cleared")
    return lines


def comparison_lines(record: RunComparison) -> list[str]:
    """The comparison block: the baseline, the overall line, the cases that changed
    significantly, the power line, the efficiency facts; or why the run was not compared."""
    if record.comparison is None:
        problem = record.problem
        why = problem.message if problem else "no comparison was made"
        lines = [f"baseline {record.baseline}: not compared: {why}"]
        if problem is not None and problem.kind == "unavailable" and record.fail_on_regression:
            lines.append("  --fail-on-regression: failing, since no regression can be ruled out")
        return lines
    comparison = record.comparison
    base = comparison.baseline
    started = f"{base.started_at:%Y-%m-%d %H:%M %Z}".strip()
    where = f" {base.source}" if base.source else ""
    made = " (run side by side, pair by pair)" if comparison.pairing == "paired" else ""
    lines = [
        f"baseline: run {base.run_id} ({started}){where}{made}",
        f"  {format_overall(comparison)}",
    ]
    if comparison.sequential is not None:
        lines.extend(f"  {line}" for line in sequential_lines(comparison.sequential))
    for verdict in ("regression", "improvement"):
        if comparison.sequential is not None:
            break  # a paired run's cases are said above, by their pairs
        changed = [case for case in comparison.cases if case.verdict == verdict]
        if not changed:
            continue
        name = "regressed" if verdict == "regression" else "improved"
        shown = "; ".join(case_change_text(case) for case in changed[:CHANGED_CASES_SHOWN])
        more = len(changed) - CHANGED_CASES_SHOWN
        lines.append(f"  {name}: {shown}" + (f"; and {more} more" if more > 0 else ""))
    if comparison.power is not None and comparison.sequential is None:
        lines.append(f"  {format_power(comparison.power)}")
    lines.extend(f"  {line}" for line in efficiency_lines(comparison))
    lines.extend(f"  {line}" for line in judge_agreement_lines(comparison))
    lines.extend(f"  note: {note}" for note in comparison.notes)
    return lines


def _figure(estimate: Estimate | None) -> str:
    if estimate is None:
        return "–"
    return f"{estimate.value:.0%} ({estimate.low:.0%}–{estimate.high:.0%})"


def judge_agreement_lines(comparison: Comparison) -> list[str]:
    """Each judge people checked in both runs: agreement and the corrected pass rate,
    baseline → this run."""
    lines = []
    for change in comparison.judge_agreement:
        corrected = change.corrected_change
        moved = (
            f", change {corrected.value:+.0%} ({corrected.low:+.0%} to {corrected.high:+.0%})"
            if corrected is not None
            else ""
        )
        doubts = (
            f"; untrustworthy in the {' and the '.join(change.untrustworthy)}"
            if change.untrustworthy
            else ""
        )
        lines.append(
            f"judge {change.label or change.criterion} against people: agreement "
            f"{_figure(change.baseline_agreement)} → {_figure(change.candidate_agreement)}; "
            f"corrected pass rate {_figure(change.baseline_corrected)} → "
            f"{_figure(change.candidate_corrected)}{moved}{doubts}"
        )
    return lines
