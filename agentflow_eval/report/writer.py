"""The report stage without Prefect: ``judged.jsonl`` → results.json, report.html and
junit.xml, in memory that grows with the number of cases, not trials.

1. One pass over ``judged.jsonl`` (:func:`~agentflow_eval.run.aggregate.aggregate_judged`)
   folds the case and run summaries, the report's chart data (:class:`TrialDigest`) and
   the byte offset of every trial's line.
2. ``results.json`` is written trial by trial from those lines, in (case id, trial
   index) order, without parsing them into models again.
3. ``report.html`` and ``junit.xml`` are written together, case by case: each case's
   trials are read back through the offsets, rendered into both, and dropped.

The files are the same as the in-memory writers (``write_results_json``, ``write_html``,
``write_junit`` of a run holding its trials) produce: they share one rendering path.

A run compared with its baseline after its reports were written (the flows' ``compare``
task) gets report.html and junit.xml written again with the comparison
(:func:`write_compared_reports`); results.json stays as it is, and the comparison is
its own file beside it (``comparison.json``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from agentflow_eval.files.atomic import atomic_text_file, write_text_atomically
from agentflow_eval.files.results_json import write_results_json
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.case_trials import CaseTrials, CaseWithTrials, each_case
from agentflow_eval.report.digest import TrialDigest
from agentflow_eval.report.html import html_chunks
from agentflow_eval.report.junit import JUnitDocument
from agentflow_eval.run.aggregate import aggregate_judged
from agentflow_eval.run.plan import RunMeta, RunPaths

if TYPE_CHECKING:
    from agentflow_eval.compare.models import RunComparison

__all__ = ["HTML_NAME", "JUNIT_NAME", "write_compared_reports", "write_run_reports"]

HTML_NAME = "report.html"
JUNIT_NAME = "junit.xml"


def write_run_reports(
    eval_set: EvalSet,
    config: EvalConfig,
    meta: RunMeta,
    paths: RunPaths,
    *,
    finished_at: datetime | None = None,
) -> RunResult:
    """Aggregate ``paths.judged`` and write the run's three report files into
    ``paths.run_dir``. Returns the run's summary; its ``trials`` list is empty (the
    trials are in results.json)."""
    digest = TrialDigest()
    run, trials = aggregate_judged(
        eval_set, config, paths.judged, meta, on_trial=digest.add, finished_at=finished_at
    )
    write_results_json(run, paths.results, trial_lines=trials.lines_in_key_order())
    write_case_reports(run, trials, digest, paths.run_dir, eval_set)
    return run


def write_compared_reports(
    eval_set: EvalSet,
    config: EvalConfig,
    meta: RunMeta,
    paths: RunPaths,
    run: RunResult,
    comparison: RunComparison,
) -> None:
    """Write report.html and junit.xml of ``run`` (the summary its report stage returned)
    again, with ``comparison``: ``judged.jsonl`` is folded once more for the trials'
    places and the charts' data, as the report stage folded it."""
    digest = TrialDigest()
    _, trials = aggregate_judged(
        eval_set, config, paths.judged, meta, on_trial=digest.add, finished_at=run.finished_at
    )
    write_case_reports(run, trials, digest, paths.run_dir, eval_set, comparison)


def write_case_reports(
    run: RunResult,
    trials: CaseTrials,
    digest: TrialDigest,
    run_dir: Path,
    eval_set: EvalSet | None = None,
    comparison: RunComparison | None = None,
) -> None:
    """Write report.html and junit.xml of ``run`` into ``run_dir`` in one pass over its
    cases: each case's trials are read once, go into both files, and are dropped before
    the next case is read. With ``comparison``, both show the run against its baseline."""
    junit = JUnitDocument(run, comparison=comparison)
    with atomic_text_file(run_dir / JUNIT_NAME) as junit_file:
        junit_file.write(junit.head())

        def cases_into_junit() -> Iterator[CaseWithTrials]:
            for case, results in each_case(run.cases, trials):
                junit_file.write(junit.testcase(case, results))
                yield case, results
                del results  # let this case's trials go before the next case is read

        write_text_atomically(
            run_dir / HTML_NAME,
            html_chunks(run, cases_into_junit(), digest, eval_set, comparison),
        )
        junit_file.write(junit.tail())
