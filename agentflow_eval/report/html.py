"""The HTML report: one self-contained file a person reads after a run.

It works offline (no CDN, no web fonts, charts as inline SVG), escapes everything a run
recorded (agent answers, tool results and ids are data, never markup), and carries a
Content-Security-Policy that lets only its own inline script and style run.

The summary, charts and one line per case are markup; each case's details travel as a
compressed block (:mod:`~agentflow_eval.report.case_details`) that the page's script
draws when the case is opened, so a 10,000-trial report stays a page a browser opens
quickly.

The page is produced in pieces, one case at a time (:func:`html_chunks`): the report
stage of a 10,000-trial run reads each case's trials from ``judged.jsonl`` as the case is
written and never holds them all. :func:`render_html` and :func:`write_html` are the same
path for a run whose trials are in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.files.case_trials import CaseWithTrials, TrialsInMemory, each_case
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.case_details import pack_case
from agentflow_eval.report.comparison_view import comparison_view
from agentflow_eval.report.csp import content_security_policy
from agentflow_eval.report.digest import TrialDigest
from agentflow_eval.report.templating import asset, compact_chunks, environment, page_style
from agentflow_eval.report.view import CaseView, build_view, case_views
from agentflow_eval.version import __version__

if TYPE_CHECKING:
    from agentflow_eval.compare.models import RunComparison

__all__ = ["html_chunks", "render_html", "write_html"]

SCRIPT = "report.js"


def html_chunks(
    run: RunResult,
    cases: Iterable[CaseWithTrials],
    digest: TrialDigest,
    comparison: RunComparison | None = None,
) -> Iterator[str]:
    """The report page for ``run`` in pieces. ``cases`` gives each of ``run.cases`` with
    its trials, in that order, and is read one case at a time as the page reaches it;
    ``digest`` holds what spans all trials (histograms, shared settings), so
    ``run.trials`` is not read. Expected trajectories and reference answers come from the
    results (``CaseResult.expected``, then criterion details); turns with no known
    expectation list their calls only.
    With ``comparison`` the page shows the run against its baseline."""
    script, style = asset(SCRIPT), page_style()
    template = environment().get_template("report.html.j2")
    view = build_view(run, digest)
    compared = None
    if comparison is not None:  # imported here: a run without a baseline never loads it
        compared = comparison_view(comparison)
    pieces = template.generate(
        view=view,
        cases=_with_details(case_views(run, cases, digest)),
        comparison=compared,
        csp=content_security_policy(scripts=[str(script)], styles=[str(style)]),
        script=script,
        style=style,
        version=__version__,
    )
    return compact_chunks(pieces)


def _with_details(views: Iterator[CaseView]) -> Iterator[tuple[CaseView, str]]:
    """Each case's view with its details packed for the page's script."""
    for view in views:
        yield view, pack_case(view)


def _in_memory(run: RunResult) -> tuple[Iterator[CaseWithTrials], TrialDigest]:
    return each_case(run.cases, TrialsInMemory(run.trials)), TrialDigest.of(run.trials)


def render_html(run: RunResult, comparison: RunComparison | None = None) -> str:
    """The report page for ``run``, whose trials are in ``run.trials`` (see
    :func:`html_chunks`)."""
    cases, digest = _in_memory(run)
    return "".join(html_chunks(run, cases, digest, comparison))


def write_html(
    run: RunResult,
    path: Path,
    comparison: RunComparison | None = None,
) -> Path:
    """Render the report of ``run`` (trials in ``run.trials``) to ``path`` (UTF-8);
    returns the path."""
    cases, digest = _in_memory(run)
    return write_text_atomically(path, html_chunks(run, cases, digest, comparison))
