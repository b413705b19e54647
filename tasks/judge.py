"""The judge task: every criterion on every trial. Deterministic criteria are instant; LLM
judges run under their own concurrency limit (separate from the agent's), retried, and
cached in Prefect's result storage (:mod:`agentflow_eval.tasks.support.judge_cache`), so a
judge call is never paid twice for the same prompt, model and sample."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.filesystems import WritableFileSystem

from agentflow_eval.criteria.judges.runtime import JudgeRuntime
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.run.judging import judge_trials
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.resumable import StageCounts
from agentflow_eval.tasks.support.judge_cache import prefect_judge_cache

__all__ = ["judge_task"]


@task(name="judge", cache_policy=NO_CACHE)
async def judge_task(
    plan: RunPlan, models: ModelClient, storage: WritableFileSystem | None = None
) -> StageCounts:
    """Judge the trials not yet in the run's judged.jsonl, judges calling through the
    run's model client, the cache in ``storage`` (default: the run's result storage)."""
    settings = plan.config.judge
    cache = await prefect_judge_cache(settings, storage)
    runtime = JudgeRuntime(settings, models=models, cache=cache)
    counts = await judge_trials(plan, runtime)
    stats = runtime.stats
    get_run_logger().info(
        "judged %d trials (%d already judged) in %.1f s; judge calls %d, cache hits %d, "
        "retries %d, failures %d",
        counts.written,
        counts.skipped,
        counts.elapsed_s,
        stats.calls,
        stats.cache_hits,
        stats.retries,
        stats.failures,
    )
    if stats.cache_errors:
        get_run_logger().warning(
            "the judge cache at %s failed %d times: those verdicts were paid for, and may be "
            "paid for again",
            runtime.cache.location if runtime.cache else "?",
            stats.cache_errors,
        )
    return counts
