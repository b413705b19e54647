"""Judge stage: every criterion on every trial. Deterministic criteria are instant; LLM
judges run under their own concurrency limit, retried, and cached (see tasks/judge_cache.py)."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.run_plan import RunPlan
from agentflow_eval.runner import StageCounts, judge_trials


@task(name="judge", cache_policy=NO_CACHE)
async def judge_task(plan: RunPlan) -> StageCounts:
    """Judge the trials not yet in the run's judged.jsonl."""
    counts = await judge_trials(plan.eval_set, plan.config, plan.paths.trials, plan.paths.judged)
    get_run_logger().info("judged %d trials, %d already judged", counts.written, counts.skipped)
    return counts
