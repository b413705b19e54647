"""Judge stage: every criterion on every trial. Deterministic criteria are instant; LLM
judges run under their own concurrency limit (separate from the agent's), retried, and
cached in Prefect's result storage (tasks/support/judge_cache.py), so a judge call is never paid
twice for the same prompt, model and sample."""

from __future__ import annotations

from agentflow_eval.tasks.support.judge_cache import prefect_judge_runtime
from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.stages import StageCounts, judge_trials


@task(name="judge", cache_policy=NO_CACHE)
async def judge_task(plan: RunPlan) -> StageCounts:
    """Judge the trials not yet in the run's judged.jsonl."""
    runtime = await prefect_judge_runtime(plan.config.judge)
    counts = await judge_trials(
        plan.eval_set,
        plan.config,
        plan.paths.trials,
        plan.paths.judged,
        context_extras={"judge": runtime},
    )
    stats = runtime.stats
    get_run_logger().info(
        "judged %d trials (%d already judged); judge calls %d, cache hits %d, retries %d, "
        "failures %d",
        counts.written,
        counts.skipped,
        stats.calls,
        stats.cache_hits,
        stats.retries,
        stats.failures,
    )
    return counts
