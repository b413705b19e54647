"""The compare task: the run against its baseline, before the reports are written (so
they show the comparison).

It loads the baseline (``latest``: the last completed run of this eval set published to
the run's target, never this run), compares, and writes ``comparison.json`` beside
results.json. A baseline that cannot be loaded never fails the run: the record says why,
and the flow states it in the summary and emits an event."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.compare.brief import comparison_lines
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.stages import (
    BaselineOptions,
    PairedOptions,
    compare_stage,
    paired_compare_stage,
)
from agentflow_eval.run.plan import RunPlan

__all__ = ["compare_pair_task", "compare_task"]


@task(name="compare", cache_policy=NO_CACHE)
async def compare_task(plan: RunPlan, run: RunResult, options: BaselineOptions) -> RunComparison:
    """Compare the run with its baseline and write ``comparison.json``."""
    record = await compare_stage(plan, run, options)
    logger = get_run_logger()
    text = "\n".join(comparison_lines(record))
    if record.problem is not None and record.problem.kind == "unavailable":
        logger.warning(text)
    else:
        logger.info(text)
    return record


@task(name="compare-pairs", cache_policy=NO_CACHE)
async def compare_pair_task(
    plan: RunPlan, run: RunResult, against: RunResult, options: PairedOptions
) -> RunComparison:
    """Compare a paired run's two sides pair by pair and write ``comparison.json``."""
    record = await paired_compare_stage(plan, run, against, options)
    get_run_logger().info("\n".join(comparison_lines(record)))
    return record
