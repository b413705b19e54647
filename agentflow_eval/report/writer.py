"""The run folder's report files, made from the run's results alone: ``results.json``,
``report.html`` and ``junit.xml``, in memory that grows with the number of cases, not
trials.

The caller has folded ``judged.jsonl`` once (the pipeline's aggregate stage): the run's
summary, the report's chart data (:class:`TrialDigest`) and where each trial's line is.

1. ``results.json`` is written trial by trial from those lines, in (case id, trial index)
   order, without parsing them into models again.
2. ``report.html`` and ``junit.xml`` are written together, case by case: each case's
   trials are read back through the offsets, rendered into both, and dropped.

The files are the same as the in-memory writers (``write_results_json``, ``write_html``,
``write_junit`` of a run holding its trials) produce: they share one rendering path. A run
compared with its baseline shows the comparison in both pages; the comparison itself is
its own file beside them (``comparison.json``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from agentflow_eval.files.atomic import atomic_text_file, write_text_atomically
from agentflow_eval.files.case_trials import CaseTrials, CaseWithTrials, JudgedFileTrials, each_case
from agentflow_eval.files.results_json import write_results_json
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.digest import TrialDigest
from agentflow_eval.report.html import html_chunks
from agentflow_eval.report.junit import JUnitDocument

if TYPE_CHECKING:
    from agentflow_eval.compare.models import RunComparison

__all__ = ["HTML_NAME", "JUNIT_NAME", "RESULTS_NAME", "write_case_reports", "write_run_reports"]

HTML_NAME = "report.html"
JUNIT_NAME = "junit.xml"
RESULTS_NAME = "results.json"


def write_run_reports(
    run: RunResult,
    trials: JudgedFileTrials,
    digest: TrialDigest,
    run_dir: Path,
    comparison: RunComparison | None = None,
    *,
    min_pass_rate: float = 1.0,
) -> None:
    """Write the run's three report files into ``run_dir``: ``run`` is its summary,
    ``trials`` where each judged trial is, ``digest`` what spans all trials; with
    ``comparison`` the pages show the run against its baseline. ``min_pass_rate``: the
    pass rate each case's junit.xml testcase must reach."""
    write_results_json(run, run_dir / RESULTS_NAME, trial_lines=trials.lines_in_key_order())
    write_case_reports(run, trials, digest, run_dir, comparison, min_pass_rate=min_pass_rate)


def write_case_reports(
    run: RunResult,
    trials: CaseTrials,
    digest: TrialDigest,
    run_dir: Path,
    comparison: RunComparison | None = None,
    *,
    min_pass_rate: float = 1.0,
) -> None:
    """Write report.html and junit.xml of ``run`` into ``run_dir`` in one pass over its
    cases: each case's trials are read once, go into both files, and are dropped before
    the next case is read. With ``comparison``, both show the run against its baseline.
    ``min_pass_rate``: the pass rate each case's junit.xml testcase must reach."""
    junit = JUnitDocument(run, min_pass_rate=min_pass_rate, comparison=comparison)
    with atomic_text_file(run_dir / JUNIT_NAME) as junit_file:
        junit_file.write(junit.head())

        def cases_into_junit() -> Iterator[CaseWithTrials]:
            for case, results in each_case(run.cases, trials):
                junit_file.write(junit.testcase(case, results))
                yield case, results
                del results  # let this case's trials go before the next case is read

        write_text_atomically(
            run_dir / HTML_NAME, html_chunks(run, cases_into_junit(), digest, comparison)
        )
        junit_file.write(junit.tail())
