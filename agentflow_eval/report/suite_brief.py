"""A regression suite run in brief: log lines, the markdown of its summary artifact and
the rows of its table artifact. What regressed comes first; an eval set without an
evaluated run, or one that was not compared, says why."""

from __future__ import annotations

from typing import Any

from agentflow_eval.compare.models import EfficiencyFinding
from agentflow_eval.compare.suite import EvalSetOutcome, SuiteSummary
from agentflow_eval.files.naming import printable
from agentflow_eval.report.markdown import md_text

__all__ = ["outcome_line", "suite_lines", "suite_markdown", "suite_table"]

_ARROWS = {"regression": "▼", "improvement": "▲"}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _change(value: float | None) -> str:
    return "" if value is None else f" ({value * 100:+.1f} pts)"


def _finding(finding: EfficiencyFinding) -> str:
    where = finding.case_id or "overall"
    ratio = "" if finding.ratio is None else f" ×{finding.ratio:.2f}"
    beyond = " (beyond tolerance)" if finding.beyond_tolerance else ""
    return f"{where} {finding.verdict}{ratio}{beyond}"


def outcome_line(outcome: EvalSetOutcome) -> str:
    """One eval set in a line: id, status, pass rate, and what changed or went wrong
    (control characters shown escaped: the line goes to logs and terminals)."""
    return printable(_outcome_text(outcome), keep_newlines=False)


def _outcome_text(outcome: EvalSetOutcome) -> str:
    head = f"{outcome.eval_set_id}: {outcome.status}"
    if outcome.status == "failed":
        return f"{head}: {outcome.problem}"
    text = f"{head}, pass rate {_pct(outcome.pass_rate)}{_change(outcome.change)}"
    if outcome.regressed_cases:
        cases = ", ".join(
            f"{c.case_id} {c.baseline} -> {c.candidate}" for c in outcome.regressed_cases
        )
        text += f"; regressed: {cases}"
    if outcome.improved_cases:
        text += f"; improved: {', '.join(outcome.improved_cases)}"
    if outcome.efficiency:
        text += "; " + ", ".join(_finding(finding) for finding in outcome.efficiency)
    if outcome.status == "not compared" and outcome.problem:
        text += f"; {outcome.problem}"
    return text


def _ordered(summary: SuiteSummary) -> list[EvalSetOutcome]:
    rank = {"regression": 0, "failed": 1, "not compared": 2, "improvement": 3}
    return sorted(summary.evals, key=lambda o: (rank.get(o.status, 4), o.index))


def suite_lines(summary: SuiteSummary, summary_url: str | None = None) -> list[str]:
    """The suite's verdict, then one line per eval set (regressions first)."""
    counts = f"{len(summary.regressed)} regressed, {len(summary.failed)} failed"
    head = (
        f"suite {summary.suite}: {summary.verdict} ({len(summary.evals)} eval set(s), "
        f"{counts}; baseline {summary.baseline})"
    )
    lines = [head, *(f"  {outcome_line(o)}" for o in _ordered(summary))]
    if summary_url:
        lines.append(f"  summary: {summary_url}")
    if summary.gate_failed:
        lines.append("  fail_on_regression: the suite fails")
    return lines


def suite_markdown(
    summary: SuiteSummary, summary_url: str | None, publish_problem: str | None
) -> str:
    """The summary artifact: the verdict, a line per eval set, the links, and a summary
    that could not be published stated as such."""
    arrow = _ARROWS.get(summary.verdict, "")
    parts = [
        f"# Suite `{summary.suite}`: {arrow + ' ' if arrow else ''}**{summary.verdict}**",
        "",
        f"{len(summary.evals)} eval set(s) against baseline `{summary.baseline}`: "
        f"{len(summary.regressed)} regressed, {len(summary.failed)} failed.",
        "",
    ]
    if summary.gate_failed:
        parts += ["**fail_on_regression: this suite run fails.**", ""]
    for outcome in _ordered(summary):
        link = f" ([report]({outcome.report_url}))" if outcome.report_url else ""
        parts.append(f"- {_arrow_of(outcome)}{md_text(outcome_line(outcome))}{link}")
    parts.append("")
    if publish_problem:
        parts.append(f"**Summary not published:** {md_text(publish_problem)}")
    elif summary_url:
        parts.append(f"[summary.html]({summary_url})")
    return "\n".join(parts)


def _arrow_of(outcome: EvalSetOutcome) -> str:
    arrow = _ARROWS.get(outcome.status)
    return f"{arrow} " if arrow else ""


def suite_table(summary: SuiteSummary) -> list[dict[str, Any]]:
    """One row per eval set, in the suite's order."""
    return [
        {
            "eval set": printable(o.eval_set_id, keep_newlines=False),
            "agent": printable(o.agent, keep_newlines=False),
            "status": o.status,
            "pass rate": None if o.pass_rate is None else round(o.pass_rate, 3),
            "change (pts)": None if o.change is None else round(o.change * 100, 1),
            "regressed cases": printable(
                ", ".join(c.case_id for c in o.regressed_cases), keep_newlines=False
            ),
            "problem": o.problem or "",
            "flow run": o.flow_run or "",
            "report": o.report_url or "",
        }
        for o in summary.evals
    ]
