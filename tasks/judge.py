"""The judge task: every criterion on every trial. Deterministic criteria are instant; LLM
judges run under their own concurrency limit (separate from the agent's), retried, and
cached in the store the flow hands it (:mod:`agentflow_eval.tasks.support.judge_cache`),
so a judge call is never paid twice for the same prompt, model and sample."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.criteria.judges.cache import JudgeCache
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.pipeline.stages import JudgeStageResult, judge_stage
from agentflow_eval.run.plan import RunPlan

__all__ = ["judge_task"]


@task(name="judge", cache_policy=NO_CACHE)
async def judge_task(
    plan: RunPlan, models: ModelClient, cache: JudgeCache | None
) -> JudgeStageResult:
    """Judge the trials not yet in the run's judged.jsonl, judges calling through the
    run's model client and answered from ``cache`` where they were before."""
    result = await judge_stage(plan, models, cache)
    counts, stats = result.counts, result.stats
    logger = get_run_logger()
    logger.info(
        "judged %d trials (%d already judged) in %.1f s; %d judge calls, %d more answered "
        "from cache; retries %d, failures %d",
        counts.written,
        counts.skipped,
        counts.elapsed_s,
        stats.calls,
        stats.cache_hits,
        stats.retries,
        stats.failures,
    )
    if stats.cache_errors:
        logger.warning(
            "the judge cache at %s failed %d times: those verdicts were paid for, and may be "
            "paid for again",
            result.cache_location or "?",
            stats.cache_errors,
        )
    return result
