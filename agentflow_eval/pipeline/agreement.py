"""A finished run's judges measured again against the labels it has now: after a review
or an import, its ``results.json`` and ``report.html`` are written again with the
agreement figures (``junit.xml`` does not show them and stays as it is). A run's own
aggregation measures them the same way (:func:`~agentflow_eval.pipeline.stages.aggregate_stage`)."""

from __future__ import annotations

import json
from pathlib import Path

from agentflow_eval.compare.baseline import read_run_comparison
from agentflow_eval.files.results_json import read_results_json, write_results_json
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.html import write_html
from agentflow_eval.review.agreement import judge_agreement
from agentflow_eval.review.bank import LabelBank
from agentflow_eval.review.recording import gather_labels
from agentflow_eval.review.verdicts import VerdictLedger

__all__ = ["refresh_agreement", "requested_min_agreement"]


def refresh_agreement(
    run_dir: Path, *, bank: LabelBank | None, min_judge_agreement: float | None = None
) -> RunResult:
    """Measure the judges of the finished run in ``run_dir`` against its labels (and,
    for its judged content, its source run's and ``bank``'s), and write its
    ``results.json`` and ``report.html`` again with the figures; returns the run.
    ``min_judge_agreement`` defaults to what the run was started with."""
    run = read_results_json(run_dir / "results.json")
    verdicts = VerdictLedger.of_run(run)
    source = run.rejudged_from
    gathered = gather_labels(
        run_dir,
        verdicts,
        bank=bank,
        sources=[Path(source.run_dir)] if source is not None else [],
    )
    minimum = (
        min_judge_agreement if min_judge_agreement is not None else requested_min_agreement(run_dir)
    )
    run.judge_agreement = judge_agreement(
        verdicts,
        gathered.labels,
        run_ids={run.run_id, *([source.run_id] if source is not None else [])},
        min_agreement=minimum,
    )
    run.notes += [note for note in gathered.notes if note not in run.notes]
    write_results_json(run, run_dir / "results.json")
    write_html(run, run_dir / "report.html", read_run_comparison(run_dir))
    return run


def requested_min_agreement(run_dir: Path) -> float | None:
    """The ``min_judge_agreement`` the run in ``run_dir`` was started with, if its
    ``run.json`` records one (0 is none)."""
    try:
        document = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    params = document.get("params") if isinstance(document, dict) else None
    value = params.get("min_judge_agreement") if isinstance(params, dict) else None
    return float(value) if isinstance(value, int | float) and value > 0 else None
