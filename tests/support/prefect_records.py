"""What the Prefect API recorded for one flow run, read by the flows tier.

Prefect records task runs from the events their engines emit, so the last task runs of a
flow can reach the API a moment after the flow returns; readers here wait for what they
expect (within a bound) rather than reading once. Every read is filtered to one flow run:
an unfiltered read returns at most the server's default page, which a session's earlier
tests fill.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
from prefect.client.schemas.objects import FlowRun, TaskRun
from prefect.client.schemas.sorting import FlowRunSort

__all__ = ["flow_run_with", "task_runs_of"]

WAIT_S = 30.0


async def flow_run_with(**parameters: Any) -> FlowRun:
    """The one flow run whose parameters include all of ``parameters``, among the latest."""
    async with get_client() as client:
        runs = await client.read_flow_runs(sort=FlowRunSort.EXPECTED_START_TIME_DESC, limit=200)
    (run,) = [
        run
        for run in runs
        if all(run.parameters.get(name) == value for name, value in parameters.items())
    ]
    return run


async def task_runs_of(
    flow_run: FlowRun, until: Callable[[list[TaskRun]], bool] = lambda runs: True
) -> list[TaskRun]:
    """The task runs of ``flow_run``, once ``until`` holds for them (or after ``WAIT_S``)."""
    deadline = time.monotonic() + WAIT_S
    async with get_client() as client:
        while True:
            runs = await client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run.id])),
                limit=200,
            )
            if until(runs) or time.monotonic() > deadline:
                return runs
            await asyncio.sleep(0.2)
