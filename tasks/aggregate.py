"""The aggregate task: the judged trials folded, once, into the run's summary (pass rates
with their intervals, criterion means) and the report's chart data."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.pipeline.stages import AgreementOptions, FoldedRun, aggregate_stage
from agentflow_eval.run.plan import RunPlan

__all__ = ["aggregate_task"]


@task(name="aggregate", cache_policy=NO_CACHE)
async def aggregate_task(plan: RunPlan, agreement: AgreementOptions | None = None) -> FoldedRun:
    """Fold the run's judged.jsonl into its summary, and measure its judges against the
    labels of its judged content."""
    folded = await aggregate_stage(plan, agreement)
    totals = folded.run.totals
    get_run_logger().info(
        "aggregated %d judged trials of %d cases: %d passed, %d failed, %d errored",
        totals.trials,
        len(folded.run.cases),
        totals.passed,
        totals.failed,
        totals.errored,
    )
    return folded
