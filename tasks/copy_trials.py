"""The copy-trials task: a re-judged run's trial stage, the source run's stored trials
copied into the new run folder (no agent runs), inside this one task run."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.pipeline.stages import copy_trials_stage
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.resumable import StageCounts

__all__ = ["copy_trials_task"]


@task(name="copy-trials", cache_policy=NO_CACHE)
async def copy_trials_task(plan: RunPlan) -> StageCounts:
    """Copy the source run's trials not yet in the run's trials.jsonl."""
    counts = await copy_trials_stage(plan)
    source = plan.meta.rejudged_from
    get_run_logger().info(
        "trials: %d copied from run %s (%d errored there), %d already here",
        counts.written,
        source.run_id if source is not None else "?",
        counts.errored,
        counts.skipped,
    )
    return counts
