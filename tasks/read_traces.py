"""The read-traces task: a batch's intake (the source's new trace objects claimed, read,
sampled and recorded per agent version), inside this one task run."""

from __future__ import annotations

import asyncio

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.pipeline.score_traces import TracesPlan
from agentflow_eval.traces.intake import read_new_traces
from agentflow_eval.traces.summary import IntakeSummary

__all__ = ["read_traces_task"]


@task(name="read-traces", cache_policy=NO_CACHE)
async def read_traces_task(plan: TracesPlan) -> IntakeSummary:
    """Read the source's new traces into the batch's recordings."""
    summary = await asyncio.to_thread(
        read_new_traces, plan.source, plan.cursor, plan.batch, plan.options
    )
    logger = get_run_logger()
    for line in summary.lines():
        logger.info("%s", line)
    return summary
