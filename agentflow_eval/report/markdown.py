"""A run, and its comparison with its baseline, as Markdown and table rows: what the
Prefect UI shows of a run (its summary and cases artifacts, the comparison table) and what
fits a pull-request comment. Everything a run recorded is escaped: it is data, never
markup, and its control characters (an id's ESC sequence) are shown as escapes, as the
terminal output shows them (:func:`~agentflow_eval.files.naming.printable`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentflow_eval.compare.brief import (
    case_change_text,
    efficiency_lines,
    judge_agreement_lines,
    sequential_lines,
)
from agentflow_eval.compare.models import CaseCounts, RunComparison, SequentialCase
from agentflow_eval.compare.render import format_overall, format_power
from agentflow_eval.files.naming import printable
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.agreement_text import (
    estimate_text,
    untrustworthy_judges,
    untrustworthy_text,
)
from agentflow_eval.report.charts import case_state
from agentflow_eval.report.scorecard import judge_noise_lines
from agentflow_eval.report.spend import case_spend_cells, spend_markdown

__all__ = [
    "CHANGED_ROWS",
    "WORST_CASES",
    "cases_table",
    "comparison_markdown",
    "comparison_rows",
    "md_code",
    "md_text",
    "pct",
    "summary_markdown",
]

WORST_CASES = 10
"""Failing or flaky cases listed in the summary."""

CHANGED_ROWS = 20
"""Changed cases listed in the summary; the comparison table has them all."""

ARROWS = {"regression": "▼", "improvement": "▲"}
_MARKDOWN_SPECIAL = re.compile(
    r"([\\`*\[\]<|~])"  # emphasis, code, links, HTML, table cells, strikethrough
    r"|(?<![^\W_])_|_(?![^\W_])"  # an underscore that could open or close emphasis
    r"|^([#>+=-])|^(\d+)([.)])"  # what starts a heading, a quote, a list, an underline
    r"|(?<=\s)(#)(?=#*\s*$)"  # an ATX heading's closing sequence
    r"|&(?=#?[0-9A-Za-z]+;)"  # an entity (&amp;)
)


def _escaped(match: re.Match[str]) -> str:
    if match[3] is not None:  # a leading "1." or "1)": the digits stay, the mark is escaped
        return f"{match[3]}\\{match[4]}"
    return "\\" + match[0]


def _one_line(text: str) -> str:
    return printable(" ".join(text.split()), keep_newlines=False)


def md_text(text: str) -> str:
    """Run data as literal markdown text, one line: control characters shown escaped, and
    each character that would be read as markdown (or HTML) where it stands escaped, and
    only those (``weather_lookup (+5 pts)`` stays as it is)."""
    return _MARKDOWN_SPECIAL.sub(_escaped, _one_line(text))


def md_code(text: str) -> str:
    """Run data as a markdown code span: one line, control characters shown escaped, no
    backtick to end the span early."""
    return "`" + _one_line(text.replace("`", "'")) + "`"


def pct(value: float) -> str:
    return f"{value * 100:.0f}%"


def _ci(low: float, high: float) -> str:
    return f"{low * 100:.0f}–{high * 100:.0f}%"


def cases_table(run: RunResult) -> list[dict[str, Any]]:
    """One row per case: pass rate, passed/runs, interval, state, each criterion's mean
    score (a column per criterion of the run), and what its trials took (median, p90)."""
    names = [(c.criterion, c.label or c.criterion) for c in run.criteria]
    rows = []
    for case in run.cases:
        means = {c.criterion: c.mean_score for c in case.criteria}
        row: dict[str, Any] = {
            "case": printable(case.case_id, keep_newlines=False),
            "state": case_state(case),
            "pass rate": round(case.pass_rate, 3),
            "passed": f"{case.passed}/{case.rated_runs}",
            "95% CI": _ci(case.ci_low, case.ci_high),
            "errored": case.errored,
        }
        for criterion, label in names:
            mean = means.get(criterion)
            row[f"{label} (mean)"] = None if mean is None else round(mean, 3)
        row.update(
            {
                f"{what} (median, p90)": text
                for what, text in case_spend_cells(case.efficiency).items()
            }
        )
        rows.append(row)
    return rows


def summary_markdown(
    run: RunResult,
    report_url: str | None = None,
    *,
    local_report: Path | None = None,
    publish_problem: str | None = None,
    comparison: RunComparison | None = None,
    notes: Sequence[str] = (),
) -> str:
    """The run at a glance: verdict, identity, models, counts, where the report is (and
    why it was not published, if it was not), what the flow did after the run (``notes``:
    a review it started, or why not), the comparison with the baseline, criteria, the
    worst cases."""
    totals = run.totals
    lines = [f"# {md_text(run.eval_set_name or run.eval_set_id)}", ""]
    if run.simulated:
        lines += ["> **SIMULATED model**: a scripted offline stand-in, not a real LLM.", ""]
    lines += [
        f"**{pct(totals.pass_rate)}** of {totals.rated_trials} trials passed "
        f"(95% CI {_ci(totals.ci_low, totals.ci_high)}): {totals.passed} passed, "
        f"{totals.failed} failed, {totals.errored} errored"
        + (f", {totals.not_evaluated} not evaluated" if totals.not_evaluated else "")
        + (
            f" ({totals.infrastructure_errors} of the errors were the model provider's"
            + (")" if run.counts_infrastructure_errors else ", left out of the pass rate)")
            if totals.infrastructure_errors
            else ""
        )
        + ".",
        "",
        f"- Agent: {md_text(run.agent)}"
        + (f" ({md_text(run.agent_model)})" if run.agent_model else "")
        + (f" · version {md_text(run.agent_version)}" if run.agent_version else "")
        + (f" · commit {md_code(run.git_sha[:12])}" if run.git_sha else ""),
        f"- Judge model: {md_text(run.judge_model or '–')}",
        f"- Eval set: {md_code(run.eval_set_id)} · run {md_code(run.run_id)}"
        f" · {run.runs_per_case} runs per case · {len(run.cases)} cases",
        spend_markdown(run),
        *(f"- {md_text(line)}" for line in judge_noise_lines(run, verbose=True)),
    ]
    if run.labels:
        lines.append(
            "- Labels: "
            + ", ".join(f"{md_text(k)}={md_text(v)}" for k, v in sorted(run.labels.items()))
        )
    if report_url:
        lines.append(f"- Report: [open the report](<{report_url.replace('>', '%3E')}>)")
    elif local_report is not None:
        lines.append(f"- Report: `{str(local_report).replace('`', '')}` (on the worker)")
    if publish_problem:
        lines += ["", f"> **Report not published.** {md_text(publish_problem)}"]
    for note in notes:
        lines += ["", f"> {md_text(note)}"]
    if comparison is not None:
        lines.append(comparison_markdown(comparison).rstrip("\n"))
    lines += agreement_markdown(run)
    if run.criteria:
        lines += [
            "",
            "| Criterion | Mean score | Passed | Failed | Not evaluated |",
            "|---|---:|---:|---:|---:|",
        ]
        for c in run.criteria:
            mean = "–" if c.mean_score is None else f"{c.mean_score:.2f}"
            cells = [md_text(c.label or c.criterion), mean, c.passed, c.failed, c.not_evaluated]
            lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    worst = sorted(
        (c for c in run.cases if c.runs and c.passed < c.runs), key=lambda c: c.pass_rate
    )
    if worst:
        lines += ["", f"## Failing or flaky cases ({len(worst)})", ""]
        for case in worst[:WORST_CASES]:
            lines.append(
                f"- {md_text(case.case_id)}: {case.passed}/{case.rated_runs} "
                f"({pct(case.pass_rate)}, {case_state(case)})"
            )
        if len(worst) > WORST_CASES:
            lines.append(f"- … and {len(worst) - WORST_CASES} more (see the report)")
    return "\n".join(lines) + "\n"


def agreement_markdown(run: RunResult) -> list[str]:
    """The judges against the people who labelled their verdicts: a warning for each
    judge below the agreement the run asked, and a table of the figures."""
    if not run.judge_agreement:
        return []
    lines = [""]
    lines += [f"> **{md_text(untrustworthy_text(a))}**" for a in untrustworthy_judges(run)]
    lines += [
        "",
        "## Judges against people",
        "",
        "| Judge | Labelled | Agreement | Sensitivity | Specificity | κ | Pass rate as judged "
        "| Corrected pass rate |",
        "|---|---:|---|---|---|---|---|---|",
    ]
    for a in run.judge_agreement:
        cells = [
            md_text(a.label or a.criterion) + (" (untrustworthy)" if a.untrustworthy else ""),
            f"{a.labelled_trials}/{a.verdicts}",
            estimate_text(a.agreement),
            estimate_text(a.sensitivity),
            estimate_text(a.specificity),
            estimate_text(a.kappa, percent=False),
            estimate_text(a.raw_pass_rate),
            estimate_text(a.corrected_pass_rate),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


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
        why = md_text(problem.message) if problem else "no comparison was made"
        lines.append(f"> **Not compared** with {_code(record.baseline)}: {why}")
        if problem is not None and problem.kind in ("no-earlier-run", "other-agent"):
            lines += [">", "> The next run of this agent here is compared with this one."]
        elif record.fail_on_regression:
            lines += [">", "> Fails on regression: without a baseline, no regression is ruled out."]
        return "\n".join(lines) + "\n"
    verdict = comparison.overall.verdict
    arrow = ARROWS.get(verdict, "")
    head = f"**{arrow} {verdict}**" if arrow else f"**{verdict}**"
    base = comparison.baseline
    lines += [
        f"{head}: {md_text(format_overall(comparison))}",
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
                md_text(case.case_id),
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
    if comparison.sequential is not None:
        first, *cases = sequential_lines(comparison.sequential)
        lines += ["", f"**{md_text(first)}**", ""]
        lines += [f"- {md_text(line.strip())}" for line in cases]
    elif comparison.power is not None:
        lines += ["", md_text(format_power(comparison.power))]
    efficiency = efficiency_lines(comparison)
    if efficiency:
        lines += ["", "**Efficiency and trajectories**", ""]
        lines += [f"- {md_text(line)}" for line in efficiency]
        lines.append("")
    judges = judge_agreement_lines(comparison)
    if judges:
        lines += ["", "**Judges against people**", ""]
        lines += [f"- {md_text(line)}" for line in judges]
        lines.append("")
    lines += [f"- {md_text(note)}" for note in comparison.notes]
    return "\n".join(lines) + "\n"


def _sequential_cells(case: SequentialCase | None) -> dict[str, Any]:
    """A paired case's status, evidence and pairs (nothing for an unpaired run)."""
    if case is None:
        return {}
    return {"status": case.status, "e-value": case.e_value, "pairs": case.pairs}


def comparison_rows(record: RunComparison) -> list[dict[str, Any]]:
    """One row per case for the table artifact: counts on both sides, change, p-values,
    verdict."""
    comparison = record.comparison
    if comparison is None:
        return []
    paired = (
        {case.case_id: case for case in comparison.sequential.cases}
        if comparison.sequential is not None
        else {}
    )
    return [
        {
            "case": printable(case.case_id, keep_newlines=False),
            **_sequential_cells(paired.get(case.case_id)),
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
