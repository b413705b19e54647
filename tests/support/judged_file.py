"""A ``judged.jsonl`` as a real run leaves it, for tests of the streaming report stage.

The trials of :func:`~support.sample_results.sample_run` are written in completion order
(shuffled, not grouped by case), with the lines a reader must leave out: a trial of a
case the eval set does not have, a second line for a trial already written (with another
verdict), a blank line, and a torn last line from a process that died mid-write.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agentflow_eval.compare.models import RunComparison
from agentflow_eval.files.case_trials import JudgedFileTrials
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import RunResult, TrialResult
from agentflow_eval.report.digest import TrialDigest
from agentflow_eval.report.writer import write_run_reports
from agentflow_eval.run.aggregate import aggregate_judged
from agentflow_eval.run.plan import RunMeta, RunPaths
from support.sample_results import sample_run

__all__ = ["JudgedFile", "write_judged_file"]


@dataclass
class JudgedFile:
    """A run folder holding only ``judged.jsonl``, and what a run would know about it."""

    paths: RunPaths
    eval_set: EvalSet
    config: EvalConfig
    meta: RunMeta
    finished_at: datetime
    counted: list[TrialResult]
    """The trials that count, sorted by (case id, trial index)."""

    def fold(self) -> tuple[RunResult, JudgedFileTrials, TrialDigest]:
        """The file folded as the pipeline's aggregate stage folds it."""
        digest = TrialDigest()
        run, trials = aggregate_judged(
            self.eval_set,
            self.config,
            self.paths.judged,
            self.meta,
            on_trial=digest.add,
            finished_at=self.finished_at,
        )
        return run, trials, digest

    def write_reports(self, comparison: RunComparison | None = None) -> RunResult:
        """Fold the file and write the run's reports, as the aggregate and report stages
        do; the run's summary."""
        run, trials, digest = self.fold()
        write_run_reports(run, trials, digest, self.paths.run_dir, comparison)
        return run


def write_judged_file(
    run_dir: Path, *, cases: int | None = None, trials: int = 3, seed: int = 3
) -> JudgedFile:
    run, eval_set = sample_run(cases=cases, trials=trials)
    counted = list(run.trials)
    shuffled = list(counted)
    random.Random(seed).shuffle(shuffled)

    stranger = shuffled[0].model_copy(deep=True)
    stranger.trial.case_id = "not_in_this_eval_set"
    second = counted[0].model_copy(deep=True)  # same (case, trial) key, another verdict
    second.status = "errored" if second.status != "errored" else "passed"
    assert second.trial.turns, "the sample's first trial answers"
    second.trial.turns[-1].final_response = "A SECOND LINE FOR AN EXISTING TRIAL"

    lines = [r.model_dump_json() for r in shuffled]
    lines.insert(len(lines) // 2, stranger.model_dump_json())
    lines.insert(len(lines) // 3, "")
    lines.append(second.model_dump_json())
    paths = RunPaths(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    torn = counted[-1].model_dump_json()[:40]
    paths.judged.write_text("\n".join(lines) + "\n" + torn, encoding="utf-8")

    meta = RunMeta(
        run_id=run.run_id,
        agent=run.agent,
        started_at=run.started_at,
        runs_per_case=run.runs_per_case,
        agent_model=run.agent_model,
        judge_model=run.judge_model,
        simulated=run.simulated,
        notes=tuple(run.notes),
    )
    config = EvalConfig.model_validate(run.config)
    return JudgedFile(paths, eval_set, config, meta, run.finished_at, counted)
