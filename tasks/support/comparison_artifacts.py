"""A run's comparison with its baseline in the Prefect UI: a block of the run's summary
artifact (the verdict, the cases that changed, what the test could detect) and a table
artifact with every case (``<deployment>-<agent>-<eval set>-comparison``)."""

from __future__ import annotations

import re
from typing import Any

from agentflow_eval.compare.brief import case_change_text
from agentflow_eval.compare.models import CaseCounts, RunComparison
from agentflow_eval.compare.render import format_overall, format_power

__all__ = ["CHANGED_ROWS", "comparison_markdown", "comparison_rows"]

CHANGED_ROWS = 20
"""Changed cases listed in the summary; the table artifact has them all."""

ARROWS = {"regression": "▼", "improvement": "▲"}
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")


def _md(text: str) -> str:
    """Run data as literal markdown text: special characters escaped, one line."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _code(text: str) -> str:
    return "`" + text.replace("`", "") + "`"


def _counts(counts: CaseCounts | None) -> str:
    return "–" if counts is None else f"{counts.passed}/{counts.runs}"


def comparison_markdown(record: RunComparison) -> str:
    """The summary's comparison block (markdown, run data escaped)."""
    lines = ["", "## Compared with the baseline", ""]
    comparison = record.comparison
    if comparison is None:
        problem = record.problem
        why = _md(problem.message) if problem else "no comparison was made"
        lines.append(f"> **Not compared** with {_code(record.baseline)}: {why}")
        if problem is not None and problem.kind == "no-earlier-run":
            lines += [">", "> The next run of this eval set is compared with this one."]
        elif record.fail_on_regression:
            lines += [">", "> Fails on regression: without a baseline, no regression is ruled out."]
        return "\n".join(lines) + "\n"
    verdict = comparison.overall.verdict
    arrow = ARROWS.get(verdict, "")
    head = f"**{arrow} {verdict}**" if arrow else f"**{verdict}**"
    base = comparison.baseline
    lines += [
        f"{head}: {_md(format_overall(comparison))}",
        "",
        f"Baseline: run {_code(base.run_id)} ({base.started_at:%Y-%m-%d %H:%M} UTC), "
        f"{_code(base.source)}"
        + (" · this run fails on regression" if record.fail_on_regression else ""),
    ]
    changed = [case for case in comparison.cases if case.verdict != "no significant change"]
    if changed:
        lines += [
            "",
            "| Case | Baseline | This run | Change | p (Holm) | Verdict |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for case in changed[:CHANGED_ROWS]:
            change = "–" if case.change is None else f"{100 * case.change:+.0f} pts"
            p = "–" if case.p_adjusted is None else f"{case.p_adjusted:.3g}"
            mark = ARROWS.get(case.verdict, "")
            cells = [
                _md(case.case_id),
                _counts(case.baseline),
                _counts(case.candidate),
                change,
                p,
                f"{mark} {case.verdict}".strip(),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        if len(changed) > CHANGED_ROWS:
            lines.append(f"\n… and {len(changed) - CHANGED_ROWS} more (see the comparison table)")
    else:
        lines += ["", "No case changed significantly."]
    if comparison.power is not None:
        lines += ["", _md(format_power(comparison.power))]
    lines += [f"- {_md(note)}" for note in comparison.notes]
    return "\n".join(lines) + "\n"


def comparison_rows(record: RunComparison) -> list[dict[str, Any]]:
    """One row per case for the table artifact: counts on both sides, change, p-values,
    verdict."""
    comparison = record.comparison
    if comparison is None:
        return []
    return [
        {
            "case": case.case_id,
            "baseline": _counts(case.baseline),
            "this run": _counts(case.candidate),
            "change (pts)": None if case.change is None else round(100 * case.change, 1),
            "p": None if case.p_value is None else float(f"{case.p_value:.4g}"),
            "p (Holm)": None if case.p_adjusted is None else float(f"{case.p_adjusted:.4g}"),
            "verdict": case.verdict,
            "summary": case_change_text(case),
        }
        for case in comparison.cases
    ]
