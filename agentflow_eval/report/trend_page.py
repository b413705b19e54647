"""``trend.html`` of a published eval set: per agent version and window, the pass rate
with its 95% interval, what a trial (a trace) took with its intervals, and each row's
test against the one before it (:mod:`~agentflow_eval.report.trend_data`).

Static and self-contained like the index: no script at all, and a CSP that allows only
its own inline style (:mod:`~agentflow_eval.report.csp`).
"""

from __future__ import annotations

from datetime import datetime

from agentflow_eval.report.charts import COMPACT_CHART_WIDTH, RunRate, trend_chart
from agentflow_eval.report.csp import content_security_policy
from agentflow_eval.report.templating import compact, environment, page_style
from agentflow_eval.report.trend_data import TrendData
from agentflow_eval.version import __version__

__all__ = ["render_trend"]


def render_trend(
    data: TrendData,
    *,
    index_link: str = "index.html",
    explorer_link: str | None = "explorer.html",
    links_until: datetime | None = None,
) -> str:
    """The trend page for ``data``; ``index_link`` and ``explorer_link`` are where its
    links to the other pages go (presigned on a private bucket; None: no explorer, as
    ``view --serve`` serves none), ``links_until`` when presigned links stop working (the
    page says so)."""
    style = page_style()
    rates = [
        RunRate(
            f"{row.version}, {row.window_start:%Y-%m-%d %H:%M} to {row.window_end:%H:%M}",
            row.pass_rate,
            row.ci_low,
            row.ci_high,
        )
        for row in reversed(data.rows)  # the chart takes the newest first
    ]
    page = (
        environment()
        .get_template("trend.html.j2")
        .render(
            data=data,
            chart=trend_chart(rates),
            compact_chart=trend_chart(rates, COMPACT_CHART_WIDTH),
            index_link=index_link,
            explorer_link=explorer_link,
            links_until=links_until,
            csp=content_security_policy(scripts=[], styles=[str(style)]),
            style=style,
            version=__version__,
        )
    )
    return compact(page)
