"""A re-judged run's trial stage: the source run's stored trials copied into the new run's
``trials.jsonl``, line for line as the source wrote them, instead of running an agent.
Trials already in the new file are skipped, so a stopped re-judge resumes like any run."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agentflow_eval.files.jsonl import iter_lines_with_offsets, open_for_append, parse_record
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.resumable import StageCounts, completed_keys

__all__ = ["copy_source_trials"]


def copy_source_trials(plan: RunPlan) -> StageCounts:
    """Append the source run's trials of ``plan``'s cases (and trial indexes) not yet in
    the plan's trials file. ``plan`` must be a re-judged run's."""
    source = plan.meta.rejudged_from
    if source is None:
        raise ValueError(f"{plan.paths.run_dir}: not a re-judged run: it has no source trials")
    started = time.perf_counter()
    done = completed_keys(plan.paths.trials)
    counts = StageCounts(skipped=len(done))
    cases = {case.eval_id for case in plan.eval_set.eval_cases}
    with os.fdopen(open_for_append(plan.paths.trials), "ab") as copy:
        trials = Path(source.run_dir) / "trials.jsonl"
        for offset, line in iter_lines_with_offsets(trials):
            trial = parse_record(line, trials, f"byte {offset}")
            key = (trial["case_id"], int(trial["trial_index"]))
            if key[0] not in cases or key[1] >= plan.runs or key in done:
                continue
            copy.write(line)
            done.add(key)
            counts.written += 1
            counts.errored += trial.get("error") is not None
    counts.elapsed_s = time.perf_counter() - started
    return counts
