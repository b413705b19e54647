"""``index.html`` of a published eval set: its pass rate over the last runs (a line with
its 95% interval as a band), each case's recent trend (:mod:`~agentflow_eval.report.trends`),
and its runs, newest first, with pass rates, each run's comparison with its baseline, and
links to its report, results and JUnit file.

The page is static and self-contained like the report, with a CSP that runs no script
at all and allows only its own inline style.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from agentflow_eval.report.charts import COMPACT_CHART_WIDTH, RunRate, trend_chart
from agentflow_eval.report.csp import content_security_policy
from agentflow_eval.report.templating import compact, environment, page_style
from agentflow_eval.report.trends import case_trends
from agentflow_eval.storage.history import RunsManifest
from agentflow_eval.version import __version__

__all__ = ["render_index"]


def _relative(folder: str, name: str) -> str:
    return f"{folder}/{name}"


def render_index(
    manifest: RunsManifest,
    *,
    link: Callable[[str, str], str] = _relative,
    explorer_link: str | None = None,
    trend_link: str | None = None,
    links_until: datetime | None = None,
) -> str:
    """The index page of ``manifest``'s eval set. ``link(folder, name)`` is the link to
    file ``name`` of the run in ``folder`` (relative unless given: a presigning store
    gives presigned ones); ``explorer_link``, where the run explorer is, if published;
    ``trend_link``, where the trend by version and window is, if published;
    ``links_until``, when presigned links stop working (the page says so)."""
    style = page_style()
    rates = [
        RunRate(
            f"{run.started_at:%Y-%m-%d %H:%M} {run.run_id}", run.pass_rate, run.ci_low, run.ci_high
        )
        for run in manifest.runs
    ]
    page = (
        environment()
        .get_template("index.html.j2")
        .render(
            manifest=manifest,
            link=link,
            explorer_link=explorer_link,
            trend_link=trend_link,
            links_until=links_until,
            title=manifest.eval_set_name or manifest.eval_set_id,
            trend=trend_chart(rates),
            compact_trend=trend_chart(rates, COMPACT_CHART_WIDTH),
            case_trends=case_trends(manifest.runs),
            latest_completed=manifest.latest_completed(),
            csp=content_security_policy(scripts=[], styles=[str(style)]),
            style=style,
            version=__version__,
        )
    )
    return compact(page)
