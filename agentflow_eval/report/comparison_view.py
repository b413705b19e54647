"""The report's comparison with the baseline, reshaped for the page: the section under the
run's facts, and a mark on the line of each case that changed significantly.

Only significant changes get an arrow and a colour (a regression ▼ in red, an
improvement ▲ in green); every number behind a verdict (counts, change, Holm-adjusted
p-value, the interval, power) is in a tooltip or in the section's expandable tables, so
noise never looks like news.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentflow_eval.compare.brief import judge_agreement_lines, sequential_lines
from agentflow_eval.compare.models import (
    BaselineProblem,
    CaseComparison,
    CaseCounts,
    Comparison,
    CriterionChange,
    RunComparison,
    RunInfo,
)
from agentflow_eval.compare.render import format_p, format_power
from agentflow_eval.report.efficiency_view import EfficiencyView, efficiency_view
from agentflow_eval.report.formats import format_pct

__all__ = ["CaseMark", "ComparisonRow", "ComparisonView", "CriterionRow", "comparison_view"]

ARROWS = {"regression": "▼", "improvement": "▲"}
TESTS = {"boschloo": "Boschloo's exact test", "fisher": "Fisher's exact test"}


def _points(change: float | None) -> str:
    return "–" if change is None else f"{100 * change:+.1f} pts".replace("-", "−")


def _p(p_value: float | None) -> str:
    return format_p(p_value, missing="–")


def _counts(counts: CaseCounts | None) -> str:
    if counts is None:
        return "–"
    text = f"{counts.passed}/{counts.runs}"
    if counts.pass_rate is not None:
        text += f" ({format_pct(counts.pass_rate)})"
    return text


def _infra(counts: CaseCounts | None) -> int:
    return counts.infrastructure_errors if counts is not None else 0


@dataclass(frozen=True)
class CaseMark:
    """The arrow on a case's line, for a significant change only; ``tooltip`` holds the
    numbers behind it."""

    arrow: str
    css: str
    points: str
    tooltip: str


@dataclass(frozen=True)
class ComparisonRow:
    """One case in the comparison's tables. ``css`` and ``arrow`` are empty unless the
    change is significant (or the case was added or removed)."""

    case_id: str
    baseline: str
    candidate: str
    change: str
    p_adjusted: str
    p_value: str
    verdict: str
    css: str
    arrow: str
    tooltip: str
    note: str = ""
    infrastructure_errors: int = 0


@dataclass(frozen=True)
class CriterionRow:
    criterion: str
    baseline: str
    candidate: str
    change: str


@dataclass(frozen=True)
class ComparisonView:
    """What the comparison section shows; ``problem`` set means there was no comparison."""

    baseline_spec: str
    fail_on_regression: bool
    problem: BaselineProblem | None = None
    baseline: RunInfo | None = None
    verdict: str = ""
    css: str = ""
    arrow: str = ""
    headline: str = ""
    interval: str = ""
    standard_errors: str = ""
    changed: list[ComparisonRow] = field(default_factory=list)
    rows: list[ComparisonRow] = field(default_factory=list)
    criteria: list[CriterionRow] = field(default_factory=list)
    power: str = ""
    paired: list[str] = field(default_factory=list)
    """A paired run's cases as their pairs decided them (the first line: the counts and
    what the run spent)."""
    notes: list[str] = field(default_factory=list)
    marks: dict[str, CaseMark] = field(default_factory=dict)
    efficiency: EfficiencyView | None = None
    judges: list[str] = field(default_factory=list)
    """Each judge people checked in both runs: agreement and corrected pass rate, baseline
    → this run."""

    @property
    def gate_failed(self) -> bool:
        if not self.fail_on_regression:
            return False
        if self.problem is not None:
            return self.problem.kind == "unavailable"
        return self.verdict == "regression"


def _case_tooltip(case: CaseComparison, alpha: float) -> str:
    parts = [f"{case.case_id}: baseline {_counts(case.baseline)} → {_counts(case.candidate)}"]
    if case.change is not None:
        test = TESTS.get(case.test or "", "exact test")
        parts.append(
            f"change {_points(case.change)}; {test}, p {_p(case.p_value)}, Holm-adjusted "
            f"{_p(case.p_adjusted)} (significant at ≤ {alpha:g}): {case.verdict}"
        )
    else:
        parts.append(case.verdict)
    if case.note:
        parts.append(case.note)
    return "; ".join(parts)


def _row(case: CaseComparison, alpha: float) -> ComparisonRow:
    flagged = case.verdict != "no significant change"
    return ComparisonRow(
        case_id=case.case_id,
        baseline=_counts(case.baseline),
        candidate=_counts(case.candidate),
        change=_points(case.change),
        p_adjusted=_p(case.p_adjusted),
        p_value=_p(case.p_value),
        verdict=case.verdict,
        css=case.verdict.replace(" ", "-") if flagged else "",
        arrow=ARROWS.get(case.verdict, ""),
        tooltip=_case_tooltip(case, alpha),
        note=case.note or "",
        infrastructure_errors=_infra(case.baseline) + _infra(case.candidate),
    )


def _criterion_row(change: CriterionChange) -> CriterionRow:
    def score(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    return CriterionRow(
        criterion=change.label or change.criterion,
        baseline=score(change.baseline_mean),
        candidate=score(change.candidate_mean),
        change="–" if change.change is None else f"{change.change:+.3f}".replace("-", "−"),
    )


def _verdict(comparison: Comparison) -> str:
    """The run's verdict: a regression anywhere (overall or a case) is a regression;
    else an improvement anywhere is one; else no significant change."""
    if comparison.regressed:
        return "regression"
    improved = any(case.verdict == "improvement" for case in comparison.cases)
    if comparison.overall.verdict == "improvement" or improved:
        return "improvement"
    return "no significant change"


def _overall(comparison: Comparison) -> tuple[str, str, str]:
    overall = comparison.overall
    if overall.change is None:
        return overall.note or "nothing to compare", "", ""
    headline = (
        f"mean pass rate over {overall.paired_cases} paired case"
        f"{'' if overall.paired_cases == 1 else 's'}: "
        f"{format_pct(overall.baseline_pass_rate or 0.0)} → "
        f"{format_pct(overall.candidate_pass_rate or 0.0)} ({_points(overall.change)}"
        + ("" if overall.verdict in ARROWS else ", not significant overall")
        + ")"
    )
    if overall.ci_low is not None and overall.ci_high is not None:
        interval = (
            f"{100 * overall.confidence:g}% interval of the change {_points(overall.ci_low)} to "
            f"{_points(overall.ci_high)}, p {_p(overall.p_value)} (paired by case)"
        )
    else:
        interval = f"p {_p(overall.p_value)}" + (f" ({overall.note})" if overall.note else "")
    errors = ""
    if overall.standard_error is not None:
        errors = (
            f"standard error {100 * overall.standard_error:.2f} pts (between cases"
            + (
                f"; clustered over trials {100 * overall.clustered_se:.2f}"
                if overall.clustered_se is not None
                else ""
            )
            + (f"; trials alone {100 * overall.trial_se:.2f}" if overall.trial_se else "")
            + ")"
        )
    return headline, interval, errors


def comparison_view(record: RunComparison) -> ComparisonView:
    """The section's view of a run's comparison record."""
    comparison = record.comparison
    if comparison is None:
        return ComparisonView(
            baseline_spec=record.baseline,
            fail_on_regression=record.fail_on_regression,
            problem=record.problem
            or BaselineProblem(kind="unavailable", message="no comparison was made"),
        )
    rows = [_row(case, comparison.alpha) for case in comparison.cases]
    marks = {
        row.case_id: CaseMark(row.arrow, row.css, row.change, row.tooltip)
        for row in rows
        if row.verdict in ARROWS
    }
    verdict = _verdict(comparison)
    headline, interval, errors = _overall(comparison)
    return ComparisonView(
        baseline_spec=record.baseline,
        fail_on_regression=record.fail_on_regression,
        baseline=comparison.baseline,
        verdict=verdict,
        css=verdict.replace(" ", "-") if verdict in ARROWS else "",
        arrow=ARROWS.get(verdict, ""),
        headline=headline,
        interval=interval,
        standard_errors=errors,
        changed=[row for row in rows if row.verdict != "no significant change"],
        rows=rows,
        criteria=[_criterion_row(change) for change in comparison.criteria],
        power=format_power(comparison.power)
        if comparison.power and comparison.sequential is None
        else "",
        paired=sequential_lines(comparison.sequential) if comparison.sequential else [],
        notes=list(comparison.notes),
        marks=marks,
        efficiency=efficiency_view(comparison),
        judges=judge_agreement_lines(comparison),
    )
