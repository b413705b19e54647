"""``explorer.html`` of a published eval set: every run with its agent, version, model,
labels, time and pass rate, filters on version, model and label, and any two of the
newest runs side by side with each case's counts and verdict
(:mod:`~agentflow_eval.report.explorer_data` computes them at publish time).

Static and self-contained like the report: the data is one JSON block, the only script
and style are the page's own, allowed by hash (:mod:`~agentflow_eval.report.csp`).
"""

from __future__ import annotations

from datetime import datetime

from markupsafe import Markup

from agentflow_eval.report.csp import content_security_policy
from agentflow_eval.report.explorer_data import ExplorerData
from agentflow_eval.report.templating import asset, compact, environment, page_style
from agentflow_eval.version import __version__

__all__ = ["EXPLORER_SCRIPT", "render_explorer"]

EXPLORER_SCRIPT = "explorer.js"


def _data_block(data: ExplorerData) -> Markup:
    """The data as JSON that cannot end its script element or open markup: ``<``, ``>``
    and ``&`` are written as JSON escapes, which parse back to the same text."""
    text = data.model_dump_json()
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)
    return Markup(text)


def render_explorer(
    data: ExplorerData,
    *,
    index_link: str = "index.html",
    trend_link: str | None = None,
    links_until: datetime | None = None,
) -> str:
    """The explorer page for ``data``; ``index_link`` is where its link to the index
    goes (a presigned link on a private bucket), ``trend_link`` where the trend page is,
    if published, ``links_until`` when presigned links stop working (the page says so)."""
    script, style = asset(EXPLORER_SCRIPT), page_style()
    page = (
        environment()
        .get_template("explorer.html.j2")
        .render(
            data=data,
            data_json=_data_block(data),
            index_link=index_link,
            trend_link=trend_link,
            links_until=links_until,
            csp=content_security_policy(scripts=[str(script)], styles=[str(style)]),
            script=script,
            style=style,
            version=__version__,
        )
    )
    return compact(page)
