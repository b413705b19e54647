"""The HTML report: one self-contained file a person reads after a run.

It works offline (no CDN, no web fonts, charts as inline SVG), escapes everything a run
recorded (agent answers, tool results and ids are data, never markup), and carries a
Content-Security-Policy that lets only its own inline script and style run.
"""

from __future__ import annotations

from pathlib import Path

from agentflow_eval import __version__
from agentflow_eval.evalset import EvalSet
from agentflow_eval.report.csp import content_security_policy
from agentflow_eval.report.templating import asset, compact, environment
from agentflow_eval.report.view import build_view
from agentflow_eval.results import RunResult

__all__ = ["render_html", "write_html"]

SCRIPT = "report.js"
STYLE = "report.css"


def render_html(run: RunResult, eval_set: EvalSet | None = None) -> str:
    """The report page for ``run``. With ``eval_set`` the expected trajectories and
    reference answers come from it; without, from the results (``CaseResult.expected``,
    then criterion details), and turns with no known expectation list their calls only."""
    script, style = asset(SCRIPT), asset(STYLE)
    template = environment().get_template("report.html.j2")
    page = template.render(
        view=build_view(run, eval_set),
        csp=content_security_policy(scripts=[str(script)], styles=[str(style)]),
        script=script,
        style=style,
        version=__version__,
    )
    return compact(page)


def write_html(run: RunResult, path: Path, eval_set: EvalSet | None = None) -> Path:
    """Render the report to ``path`` (UTF-8); returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(run, eval_set), encoding="utf-8")
    return path
