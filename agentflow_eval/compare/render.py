"""A comparison for people: the case table, the overall line, criteria, power, notes.

Rendered with ``rich``: colour and box drawing on a terminal; plain ASCII tables without
escape codes when the output is a file or a pipe (CI logs). ``NO_COLOR`` turns colour
off on a terminal too.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentflow_eval.compare.efficiency import WORSE
from agentflow_eval.compare.models import (
    CaseComparison,
    CaseCounts,
    Comparison,
    EfficiencyComparison,
    MeasureChange,
    OverallEfficiencyChange,
    PathDivergence,
    PowerSummary,
)
from agentflow_eval.files.naming import printable

__all__ = [
    "EFFICIENCY_TEST",
    "PAIRED_EFFICIENCY_TEST",
    "console_for",
    "efficiency_changes",
    "efficiency_test",
    "format_divergence",
    "format_efficiency_overall",
    "format_measure_change",
    "format_overall",
    "format_p",
    "format_power",
    "print_comparison",
    "worse_verdicts",
]

EFFICIENCY_TEST = (
    "per case: Mann–Whitney U test on the trials' values, two-sided, Holm-corrected across "
    "the cases per measure; errored trials left out; size: the ratio of medians"
)
PAIRED_EFFICIENCY_TEST = (
    "per case: Wilcoxon signed-rank test on the pairs' differences (runs made side by "
    "side), two-sided, Holm-corrected across the cases per measure; errored trials left "
    "out; size: the ratio of medians"
)
_TEST_NAMES = {"mann-whitney-u": "Mann–Whitney U", "wilcoxon-signed-rank": "Wilcoxon signed-rank"}
_MEASURE_NAMES = {
    "cost": "cost",
    "tokens": "tokens",
    "latency": "latency",
    "tool_calls": "tool calls",
}

_STYLES = {
    "regression": "bold red",
    "improvement": "bold green",
    "added": "cyan",
    "removed": "yellow",
    "no significant change": "",
}
_CRITERION_EPSILON = 0.005  # a criterion mean that moved less than this is shown as unchanged


def console_for(stream: TextIO | None = None) -> Console:
    """A console for ``stream`` (stdout by default): rich on a terminal, plain text
    otherwise (and without colour under ``NO_COLOR``)."""
    stream = stream or sys.stdout
    terminal = stream.isatty()
    return Console(
        file=stream,
        force_terminal=terminal,
        no_color=not terminal or bool(os.environ.get("NO_COLOR")),
        highlight=False,
        emoji=False,
        # a pipe has no width: never wrap a line of the table there
        width=None if terminal else 10_000,
        legacy_windows=False,
    )


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def _points(change: float | None) -> str:
    return "-" if change is None else f"{100 * change:+.1f} pts"


def format_p(p_value: float | None, missing: str = "-") -> str:
    """A p-value as the comparison shows it everywhere: three decimals, ``<0.001`` below."""
    if p_value is None:
        return missing
    return "<0.001" if p_value < 0.001 else f"{p_value:.3f}"


def _counts(counts: CaseCounts | None) -> str:
    if counts is None:
        return "-"
    text = f"{counts.passed}/{counts.runs}"
    if counts.infrastructure_errors:
        text += f" (+{counts.infrastructure_errors} infra)"
    return text


def _criteria_moved(case: CaseComparison) -> str:
    moved = [
        f"{change.criterion} {change.baseline_mean:.2f} -> {change.candidate_mean:.2f}"
        for change in case.criteria
        if change.change is not None
        and change.baseline_mean is not None
        and change.candidate_mean is not None
        and abs(change.change) >= _CRITERION_EPSILON
    ]
    return ", ".join(moved)


def _case_table(comparison: Comparison, ascii_only: bool) -> Table:
    table = Table(box=box.ASCII if ascii_only else box.SIMPLE_HEAVY, show_edge=not ascii_only)
    # on a narrow terminal the case ids and criteria fold; counts and verdicts never do
    table.add_column("case", overflow="fold")
    for name in ("baseline", "candidate", "change", "p (Holm)"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for case in comparison.cases:
        table.add_row(
            Text(printable(case.case_id, keep_newlines=False)),
            _counts(case.baseline),
            _counts(case.candidate),
            _points(case.change),
            format_p(case.p_adjusted),
            Text(case.verdict + (" *" if case.note else ""), style=_STYLES[case.verdict]),
        )
    return table


def _criteria_table(comparison: Comparison, ascii_only: bool) -> Table:
    table = Table(
        title="criteria: mean score over trials",
        box=box.ASCII if ascii_only else box.SIMPLE_HEAVY,
        show_edge=not ascii_only,
        title_justify="left",
    )
    table.add_column("criterion")
    table.add_column("baseline", justify="right")
    table.add_column("candidate", justify="right")
    table.add_column("change", justify="right")
    for change in comparison.criteria:

        def score(value: float | None) -> str:
            return "-" if value is None else f"{value:.3f}"

        table.add_row(
            Text(change.criterion),
            score(change.baseline_mean),
            score(change.candidate_mean),
            "-" if change.change is None else f"{change.change:+.3f}",
        )
    return table


def format_overall(comparison: Comparison) -> str:
    """The overall line: the paired change, its interval and the verdict."""
    overall = comparison.overall
    counted = [f"{overall.paired_cases} case(s) paired"]
    if overall.added_cases:
        counted.append(f"{overall.added_cases} added")
    if overall.removed_cases:
        counted.append(f"{overall.removed_cases} removed")
    head = f"Overall ({', '.join(counted)}): "
    if overall.change is None:
        return head + f"{overall.verdict} ({overall.note})"
    body = (
        f"mean pass rate {_percent(overall.baseline_pass_rate)} -> "
        f"{_percent(overall.candidate_pass_rate)}, change {_points(overall.change)}"
    )
    if overall.ci_low is not None and overall.ci_high is not None:
        body += (
            f" ({100 * overall.confidence:g}% CI {_points(overall.ci_low)} to "
            f"{_points(overall.ci_high)}, p {format_p(overall.p_value)})"
        )
    elif overall.note:
        body += f" ({overall.note})"
    cases = []
    if overall.regressed_cases:
        cases.append(f"{overall.regressed_cases} case(s) regressed")
    if overall.improved_cases:
        cases.append(f"{overall.improved_cases} improved")
    return head + body + f": {overall.verdict}" + (f"; {', '.join(cases)}" if cases else "")


def format_power(power: PowerSummary) -> str:
    """The power line: the smallest drop a case would show, the runs a drop needs."""
    runs = (
        f"{power.runs_baseline} runs per case"
        if power.runs_baseline == power.runs_candidate
        else f"{power.runs_baseline} baseline and {power.runs_candidate} candidate runs per case"
    )
    level = f"one-sided level {power.level:.2g}"
    if power.cases_tested > 1:
        level = f"Holm over {power.cases_tested} cases: {level}"
    head = f"Power ({100 * power.target_power:g}%, {level}) with {runs}: "
    mean = _percent(power.reference_pass_rate)
    found = f"a case at the baseline's mean pass rate ({mean}) is "
    if power.minimum_detectable_drop is None:
        found += "not flagged even if it drops to 0%"
    else:
        found += f"flagged once it drops by {100 * power.minimum_detectable_drop:.0f} pts"
    alone = power.minimum_detectable_drop_alone
    if power.cases_tested > 1 and alone is not None:
        found += f" ({100 * alone:.0f} pts if it were the only case)"
    full = power.minimum_detectable_drop_from_full
    if power.reference_pass_rate < 1 and full is not None:
        found += f"; a case that always passed, once it drops by {100 * full:.0f} pts"
    drop = f"{100 * power.detect_drop:.0f}-pt drop from {mean}"
    if power.runs_needed is None:
        plan = f"A {drop} is not possible."
    else:
        more = "more than " if power.runs_needed_exceeds else ""
        approximate = power.runs_needed_method == "normal approximation"
        how = " (normal approximation)" if approximate else ""
        plan = f"A {drop} needs {more}{power.runs_needed} runs per side{how}."
    return f"{head}{found}. {plan}"


def _value(measure: str, value: float | None) -> str:
    if value is None:
        return "-"
    if measure == "cost":
        return f"${value:.4g}"
    if measure == "latency":
        return f"{value:,.0f} ms"
    return f"{value:,.1f}".removesuffix(".0")


def _ratio(ratio: float | None) -> str:
    return "-" if ratio is None else f"×{ratio:.2f}"


def format_measure_change(change: MeasureChange) -> str:
    """One measure of one case: ``latency: median 2,000 ms -> 4,100 ms (×2.05,
    Mann–Whitney U p (Holm) 0.003): slower``."""
    name = _MEASURE_NAMES[change.measure]
    text = (
        f"{name}: median {_value(change.measure, change.baseline_median)} -> "
        f"{_value(change.measure, change.candidate_median)}"
    )
    if change.test is None:
        return text + f" ({change.note})" if change.note else text
    test = _TEST_NAMES[change.test]
    text += f" ({_ratio(change.ratio)}, {test} p (Holm) {format_p(change.p_adjusted)})"
    text += f": {change.verdict}"
    if change.note and change.verdict == "no significant change":
        text += f" ({change.note})"
    if change.beyond_tolerance and change.tolerance is not None:
        text += f", beyond the {100 * change.tolerance:g}% tolerated"
    return text


def format_efficiency_overall(change: OverallEfficiencyChange) -> str:
    """One measure overall: the geometric mean ratio, its interval, the verdict."""
    name = _MEASURE_NAMES[change.measure]
    head = f"{name} {_ratio(change.ratio)}"
    if change.ci_low is not None and change.ci_high is not None:
        head += (
            f" ({100 * change.confidence:g}% CI {_ratio(change.ci_low)} to "
            f"{_ratio(change.ci_high)}, p {format_p(change.p_value)}, {change.paired_cases} cases)"
        )
    elif change.note:
        head += f" ({change.note})"
    head += f": {change.verdict}"
    cases = []
    if change.worse_cases:
        cases.append(f"{change.worse_cases} case(s) worse")
    if change.better_cases:
        cases.append(f"{change.better_cases} better")
    if cases:
        head += f"; {', '.join(cases)}"
    if change.tolerance is not None:
        head += f"; tolerated increase {100 * change.tolerance:g}%" + (
            ", exceeded" if change.beyond_tolerance else ""
        )
    return head


def format_divergence(divergence: PathDivergence) -> str:
    """Where a case's paths part: ``tools: step 2: refund 0/10 → 6/10, ... (most common
    path: a, b (10/10) → a, c (6/10))``."""
    kind = "tools" if divergence.kind == "tool" else "nodes"

    def path(steps: list[str], trials: int, of: int) -> str:
        return f"{', '.join(steps) or '(none)'} ({trials}/{of})"

    d = divergence
    paths = (
        f"{path(d.baseline_path, d.baseline_path_trials, d.baseline_trials)} → "
        f"{path(d.candidate_path, d.candidate_path_trials, d.candidate_trials)}"
    )
    if divergence.step is None:
        return f"{kind}: the most common paths agree: {paths}"
    calls = ", ".join(
        f"{call.name} {call.baseline}/{divergence.baseline_trials} → "
        f"{call.candidate}/{divergence.candidate_trials}"
        for call in divergence.calls
    )
    return f"{kind}: step {divergence.step}: {calls} (most common path: {paths})"


def efficiency_test(efficiency: EfficiencyComparison) -> str:
    """How efficiency was tested, in words: pair by pair, or trial against trial."""
    return PAIRED_EFFICIENCY_TEST if efficiency.pairing == "paired" else EFFICIENCY_TEST


def efficiency_changes(case: CaseComparison) -> list[MeasureChange]:
    """The case's significant efficiency changes."""
    if case.efficiency is None:
        return []
    return [m for m in case.efficiency.measures if m.verdict != "no significant change"]


def worse_verdicts(case: CaseComparison) -> list[str]:
    """How the case got worse: ``regression`` (its pass rate), then each measure's."""
    worse: list[str] = ["regression"] if case.verdict == "regression" else []
    return worse + [c.verdict for c in efficiency_changes(case) if c.verdict in WORSE]


def _print_efficiency(
    comparison: Comparison, efficiency: EfficiencyComparison, console: Console
) -> None:
    console.print(Text(f"Efficiency ({efficiency_test(efficiency)}):"), soft_wrap=True)
    changed = [(case, efficiency_changes(case)) for case in comparison.cases]
    if not any(changes for _, changes in changed):
        console.print(
            Text("  no case changed significantly in cost, tokens, latency or tool calls")
        )
    for case, changes in changed:
        for change in changes:
            style = "bold red" if change.beyond_tolerance else ""
            line = (
                f"  {printable(case.case_id, keep_newlines=False)}: {format_measure_change(change)}"
            )
            console.print(Text(line, style=style), soft_wrap=True)
    console.print(
        Text("Efficiency overall (geometric mean of per-case median ratios, t interval):"),
        soft_wrap=True,
    )
    for overall in efficiency.overall:
        style = "bold red" if overall.beyond_tolerance else ""
        console.print(Text(f"  {format_efficiency_overall(overall)}", style=style), soft_wrap=True)
    for note in efficiency.notes:
        console.print(Text(f"Note: {note}"), soft_wrap=True)


def _print_divergence(comparison: Comparison, console: Console) -> None:
    parted = [case for case in comparison.cases if case.divergence]
    if not parted:
        return
    console.print(Text("Where the trajectories part ways (cases that got worse):"))
    for case in parted:
        worse = ", ".join(worse_verdicts(case))
        head = f"  {printable(case.case_id, keep_newlines=False)} ({worse}): "
        for divergence in case.divergence:
            console.print(Text(head + format_divergence(divergence)), soft_wrap=True)


def print_comparison(comparison: Comparison, console: Console) -> None:
    """Print the whole comparison to ``console``."""
    ascii_only = console.no_color and not console.is_terminal
    baseline, candidate = comparison.baseline, comparison.candidate
    title = printable(baseline.eval_set_id, keep_newlines=False) + (
        f" ({baseline.eval_set_name})" if baseline.eval_set_name else ""
    )
    if candidate.eval_set_id != baseline.eval_set_id:
        title += f" -> {printable(candidate.eval_set_id, keep_newlines=False)}"
    console.print(Text(f"Comparing {title}"), soft_wrap=True)
    for name, info in (("baseline ", baseline), ("candidate", candidate)):
        console.print(
            Text(f"  {name} {info.run_id}  {info.started_at:%Y-%m-%d %H:%M %Z}  {info.source}"),
            soft_wrap=True,
        )
    console.print(_case_table(comparison, ascii_only))
    for case in comparison.cases:
        if case.note:
            console.print(
                Text(f"* {printable(case.case_id, keep_newlines=False)}: {case.note}"),
                soft_wrap=True,
            )
    overall = Text(format_overall(comparison), style=_STYLES[comparison.overall.verdict])
    console.print(overall, soft_wrap=True)
    changed = [
        (case, _criteria_moved(case))
        for case in comparison.cases
        if case.verdict in ("regression", "improvement")
    ]
    if any(moved for _, moved in changed):
        console.print(Text("Criterion means of the cases that changed:"))
        for case, moved in changed:
            if moved:
                line = Text(
                    f"  {printable(case.case_id, keep_newlines=False)} ({case.verdict}): ",
                    style=_STYLES[case.verdict],
                )
                console.print(line + Text(moved), soft_wrap=True)
    if comparison.criteria:
        console.print()
        console.print(_criteria_table(comparison, ascii_only))
    if comparison.power is not None:
        console.print(Text(format_power(comparison.power)), soft_wrap=True)
    if comparison.efficiency is not None:
        _print_efficiency(comparison, comparison.efficiency, console)
        _print_divergence(comparison, console)
    for note in comparison.notes:
        console.print(Text(f"Note: {note}"), soft_wrap=True)
