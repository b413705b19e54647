"""What ``explorer.html`` shows, computed at publish time: every published run of an eval
set (agent, version, model, labels, time, pass rate) and, for the newest
:data:`EXPLORER_COMPARED_RUNS` of them, each case's counts and the comparison of every
pair of them, older run as the baseline, made by :func:`~agentflow_eval.compare.compare_runs`
with its defaults: the verdicts ``agentflow-eval compare --json`` gives for the same two
runs. The page only looks them up, so no statistic is computed in the browser.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from pydantic import BaseModel, Field

from agentflow_eval.compare import DEFAULT_ALPHA, Comparison, compare_runs
from agentflow_eval.models.results import RunResult
from agentflow_eval.storage.history import CASE_HISTORY_RUNS, RunEntry, RunsManifest

__all__ = [
    "EXPLORER_COMPARED_RUNS",
    "ExplorerCase",
    "ExplorerComparison",
    "ExplorerData",
    "ExplorerRun",
    "explorer_data",
    "pair_key",
]

EXPLORER_COMPARED_RUNS = CASE_HISTORY_RUNS
"""The newest runs the explorer compares pairwise (n·(n−1)/2 comparisons per publish);
older runs are listed with their totals only."""

Link = Callable[[str, str], str]
"""The link to file ``name`` of the run in folder ``folder``: ``link(folder, name)``."""


class ExplorerRun(BaseModel):
    """One published run as the explorer lists it."""

    folder: str
    run_id: str
    agent: str
    agent_version: str | None
    agent_model: str | None
    labels: dict[str, str]
    started_at: datetime
    passed: int
    trials: int
    pass_rate: float
    ci_low: float
    ci_high: float
    report: str
    comparable: bool = Field(description="among the runs compared pairwise")
    cases: dict[str, tuple[int, int]] = Field(
        default_factory=dict, description="per case: trials passed, trials counted"
    )


class ExplorerCase(BaseModel):
    """One case of a compared pair: its counts on each side (None: not in that run)."""

    case_id: str
    verdict: str
    baseline: tuple[int, int] | None
    candidate: tuple[int, int] | None
    p_adjusted: float | None


class ExplorerComparison(BaseModel):
    """A compared pair, as far as the page shows it."""

    baseline: str
    candidate: str
    verdict: str
    change: float | None
    ci_low: float | None
    ci_high: float | None
    regressed: bool
    cases: list[ExplorerCase]


class ExplorerData(BaseModel):
    """Everything the explorer page shows, embedded in it as JSON."""

    eval_set_id: str
    title: str
    compared_runs: int = EXPLORER_COMPARED_RUNS
    alpha: float
    runs: list[ExplorerRun]
    comparisons: dict[str, ExplorerComparison]
    notes: list[str] = Field(default_factory=list)


def pair_key(baseline_folder: str, candidate_folder: str) -> str:
    """How the page looks up the comparison of two runs (folders never hold a space)."""
    return f"{baseline_folder} {candidate_folder}"


def _pair(comparison: Comparison, baseline: str, candidate: str) -> ExplorerComparison:
    overall = comparison.overall
    return ExplorerComparison(
        baseline=baseline,
        candidate=candidate,
        verdict=overall.verdict,
        change=overall.change,
        ci_low=overall.ci_low,
        ci_high=overall.ci_high,
        regressed=comparison.regressed,
        cases=[
            ExplorerCase(
                case_id=case.case_id,
                verdict=case.verdict,
                baseline=(case.baseline.passed, case.baseline.runs) if case.baseline else None,
                candidate=(case.candidate.passed, case.candidate.runs) if case.candidate else None,
                p_adjusted=case.p_adjusted,
            )
            for case in comparison.cases
        ],
    )


def _run(entry: RunEntry, link: Link, comparable: bool) -> ExplorerRun:
    return ExplorerRun(
        folder=entry.folder,
        run_id=entry.run_id,
        agent=entry.agent,
        agent_version=entry.agent_version,
        agent_model=entry.agent_model,
        labels=entry.labels,
        started_at=entry.started_at,
        passed=entry.passed,
        trials=entry.trials,
        pass_rate=entry.pass_rate,
        ci_low=entry.ci_low,
        ci_high=entry.ci_high,
        report=link(entry.folder, "report.html"),
        comparable=comparable,
        cases=entry.case_counts,
    )


def explorer_data(
    manifest: RunsManifest,
    summaries: Mapping[str, RunResult],
    link: Link,
    *,
    notes: list[str] | None = None,
) -> ExplorerData:
    """The explorer's data for ``manifest``. ``summaries`` holds the results (summaries
    suffice) of the runs to compare, by folder; only the newest
    :data:`EXPLORER_COMPARED_RUNS` runs of the manifest that have one are compared."""
    compared = [
        entry for entry in manifest.runs[:EXPLORER_COMPARED_RUNS] if entry.folder in summaries
    ]
    oldest_first = sorted(compared, key=lambda entry: (entry.started_at, entry.folder))
    comparisons: dict[str, ExplorerComparison] = {}
    for index, baseline in enumerate(oldest_first):
        for candidate in oldest_first[index + 1 :]:
            comparison = compare_runs(
                summaries[baseline.folder],
                summaries[candidate.folder],
                alpha=DEFAULT_ALPHA,
                allow_different_eval_sets=True,
            )
            key = pair_key(baseline.folder, candidate.folder)
            comparisons[key] = _pair(comparison, baseline.folder, candidate.folder)
    chosen = {entry.folder for entry in compared}
    return ExplorerData(
        eval_set_id=manifest.eval_set_id,
        title=manifest.eval_set_name or manifest.eval_set_id,
        alpha=DEFAULT_ALPHA,
        runs=[_run(entry, link, entry.folder in chosen) for entry in manifest.runs],
        comparisons=comparisons,
        notes=list(notes or []),
    )
