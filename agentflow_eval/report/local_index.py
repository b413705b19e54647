"""The page ``agentflow-eval view --serve`` shows: every run under a local output
folder, newest first, across eval sets, with its pass rate, agent, time and links to its
report, its files and its eval set's history page (:mod:`~agentflow_eval.report.index_page`).

Static and self-contained like the history index: a CSP that runs no script and allows
only its own inline style; every name from a run is escaped data.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentflow_eval.report.csp import content_security_policy
from agentflow_eval.report.templating import compact, environment, page_style
from agentflow_eval.storage.history import RunsManifest
from agentflow_eval.version import __version__

__all__ = ["render_local_index"]


def render_local_index(
    title: str, manifests: Mapping[str, RunsManifest], *, unreadable: int = 0
) -> str:
    """The page for ``manifests`` (per eval set folder name, each folder's runs); links
    are relative to the output folder."""
    style = page_style()
    rows = sorted(
        ((set_name, run) for set_name, manifest in manifests.items() for run in manifest.runs),
        key=lambda row: (row[1].started_at, row[0], row[1].folder),
        reverse=True,
    )
    sets = {
        set_name: manifest.eval_set_name or manifest.eval_set_id
        for set_name, manifest in manifests.items()
    }
    page = (
        environment()
        .get_template("local_index.html.j2")
        .render(
            title=title,
            rows=rows,
            sets=sets,
            unreadable=unreadable,
            csp=content_security_policy(scripts=[], styles=[str(style)]),
            style=style,
            version=__version__,
        )
    )
    return compact(page)
