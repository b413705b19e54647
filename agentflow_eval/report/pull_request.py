"""A comparison as Markdown fit for a pull-request comment: the verdict in the heading,
what was compared with what, the cases that changed significantly (regressions first),
the others folded away, criterion means and the power line. ``agentflow-eval compare
--format markdown`` prints it, and the evaluate flow's compare stage makes it a Prefect
markdown artifact.

The comment opens with an HTML comment naming the eval set, which a CI job can look for
to update its earlier comment instead of adding another. Run data (case ids, agents,
paths) is escaped, so nothing in it renders as Markdown or HTML.
"""

from __future__ import annotations

from agentflow_eval.compare.models import CaseComparison, CaseCounts, Comparison, RunComparison
from agentflow_eval.compare.render import format_overall, format_p, format_power
from agentflow_eval.files.naming import printable
from agentflow_eval.report.markdown import ARROWS, md_code, md_text

__all__ = [
    "MARKER",
    "comparison_comment",
    "headline",
    "not_compared_comment",
    "run_comparison_comment",
]

MARKER = "<!-- agentflow-eval:compare {eval_set_id} -->"
"""The comment's first line: a CI job finds its earlier comment on the pull request by it."""


def _marker(eval_set_id: str) -> str:
    """:data:`MARKER` of ``eval_set_id``, which can neither end the HTML comment nor put
    control characters on a terminal."""
    return MARKER.format(eval_set_id=printable(eval_set_id.replace("--", "-"), keep_newlines=False))


TEST_NAME = "Boschloo's exact test per case, Holm-corrected; overall: paired by case"
"""The named tests behind every verdict of the comment."""


def _rate(counts: CaseCounts | None) -> str:
    if counts is None:
        return "–"
    rate = "–" if counts.pass_rate is None else f"{100 * counts.pass_rate:.0f}%"
    return f"{counts.passed}/{counts.runs} ({rate})"


def _points(change: float | None) -> str:
    return "–" if change is None else f"{100 * change:+.0f} pts"


def _case_rows(cases: list[CaseComparison]) -> list[str]:
    rows = [
        "| Case | Baseline | Candidate | Change | p (Holm) | Verdict |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for case in cases:
        mark = ARROWS.get(case.verdict, "")
        cells = [
            md_text(case.case_id),
            _rate(case.baseline),
            _rate(case.candidate),
            _points(case.change),
            format_p(case.p_adjusted, "–"),
            f"{mark} {case.verdict}".strip(),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def _side(label: str, comparison: Comparison, which: str) -> str:
    info = comparison.baseline if which == "baseline" else comparison.candidate
    model = f", model {md_code(info.agent_model)}" if info.agent_model else ""
    simulated = " (simulated)" if info.simulated else ""
    return (
        f"- **{label}**: run {md_code(info.run_id)} of {md_code(info.agent)}{model}, "
        f"{info.started_at:%Y-%m-%d %H:%M} UTC, {info.runs_per_case} runs per case"
        f"{simulated} — {md_code(info.source)}"
    )


def headline(comparison: Comparison) -> str:
    """The comment's verdict: a regression overall or in any case comes first, then an
    improvement overall or in any case, else no significant change."""
    if comparison.regressed:
        return "regression"
    verdicts = {comparison.overall.verdict, *(case.verdict for case in comparison.cases)}
    return "improvement" if "improvement" in verdicts else "no significant change"


def comparison_comment(comparison: Comparison, *, report_url: str | None = None) -> str:
    """The pull-request comment of ``comparison`` (Markdown, ending in a newline)."""
    candidate = comparison.candidate
    title = candidate.eval_set_name or candidate.eval_set_id
    verdict = headline(comparison)
    arrow = ARROWS.get(verdict, "")
    lines = [
        _marker(candidate.eval_set_id),
        f"### {arrow + ' ' if arrow else ''}{md_text(title)}: {verdict}",
        "",
        md_text(format_overall(comparison)),
        "",
        _side("Baseline", comparison, "baseline"),
        _side("Candidate", comparison, "candidate"),
    ]
    if report_url:
        lines.append(f"- **Report**: <{report_url.replace('>', '%3E')}>")
    for verdict_of, heading in (
        ("regression", "Regressed"),
        ("improvement", "Improved"),
        ("added", "Added (candidate only)"),
        ("removed", "Removed (baseline only)"),
    ):
        cases = [case for case in comparison.cases if case.verdict == verdict_of]
        if cases:
            lines += ["", f"**{heading}** ({len(cases)})", "", *_case_rows(cases)]
    unchanged = [c for c in comparison.cases if c.verdict == "no significant change"]
    if unchanged:
        lines += [
            "",
            f"<details><summary>No significant change ({len(unchanged)} cases)</summary>",
            "",
            *_case_rows(unchanged),
            "",
            "</details>",
        ]
    scored = [c for c in comparison.criteria if c.change is not None]
    if scored:
        lines += ["", "| Criterion | Baseline mean | Candidate mean | Change |"]
        lines.append("|---|---:|---:|---:|")
        for change in scored:
            lines.append(
                f"| {md_text(change.label or change.criterion)} | {change.baseline_mean:.3f} | "
                f"{change.candidate_mean:.3f} | {change.change:+.3f} |"
            )
    if comparison.power is not None:
        lines += ["", md_text(format_power(comparison.power))]
    lines += [f"- {md_text(note)}" for note in comparison.notes]
    lines += ["", f"<sub>{TEST_NAME}; α = {comparison.alpha:g} (two-sided).</sub>"]
    return "\n".join(lines) + "\n"


def not_compared_comment(eval_set_id: str, baseline: str, why: str) -> str:
    """The comment of a run that was not compared: one line saying why."""
    return (
        _marker(eval_set_id)
        + f"\n### {md_text(eval_set_id)}: not compared\n\n"
        + f"Not compared with {md_code(baseline)}: {md_text(why)}\n"
    )


def run_comparison_comment(
    record: RunComparison, eval_set_id: str, *, report_url: str | None = None
) -> str:
    """The comment of a run's comparison with its baseline, or of why there is none."""
    if record.comparison is not None:
        return comparison_comment(record.comparison, report_url=report_url)
    why = record.problem.message if record.problem else "no comparison was made"
    return not_compared_comment(eval_set_id, record.baseline, why)
