"""``summary.html`` of a regression suite run: each eval set against its baseline, with
an arrow and a colour only where the change was significant, and links to each run's
report. Static and self-contained like the other pages: no script, only its own style."""

from __future__ import annotations

from agentflow_eval.compare.suite import SuiteSummary
from agentflow_eval.report.csp import content_security_policy
from agentflow_eval.report.templating import compact, environment, page_style
from agentflow_eval.version import __version__

__all__ = ["render_suite_summary"]


def render_suite_summary(summary: SuiteSummary, links: dict[int, str] | None = None) -> str:
    """The summary page; ``links`` maps an eval set's index to the address of its
    published report as the page should link it (default: each outcome's report URL)."""
    style = page_style()
    page = (
        environment()
        .get_template("suite.html.j2")
        .render(
            summary=summary,
            links=links or {},
            csp=content_security_policy(scripts=[], styles=[str(style)]),
            style=style,
            version=__version__,
        )
    )
    return compact(page)
