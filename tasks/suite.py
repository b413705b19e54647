"""The regression flow's own tasks: each eval set's outcome from what its evaluate run
published, and the suite's summary written and published.

Both read or write the store off the event loop (boto3 and the file system block)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.compare.suite import SuiteSummary, suite_verdict
from agentflow_eval.compare.suite_outcomes import (
    EvalSetIdentity,
    FlowRunEnd,
    outcome_of_entry,
)
from agentflow_eval.models.regression import RegressionParams
from agentflow_eval.publish.suite_publisher import (
    SuitePublishOutcome,
    publish_suite_summary,
    write_suite_summary,
)
from agentflow_eval.storage import open_store
from agentflow_eval.tasks.publish import publish_target

__all__ = ["collect_suite_task", "publish_suite_task"]


@task(name="collect-suite", cache_policy=NO_CACHE)
async def collect_suite_task(
    params: RegressionParams,
    identities: list[EvalSetIdentity],
    tags: list[str],
    ends: list[FlowRunEnd],
    *,
    flow_run_id: str | None,
    flow_run_name: str | None,
    started_at: datetime,
    finished_at: datetime,
) -> SuiteSummary:
    """Find each eval set's run by its label under ``publish_to``, read its comparison,
    and put the suite's summary together."""
    store = open_store(await publish_target(params.publish_to, params.s3))

    def collect() -> SuiteSummary:
        outcomes = [
            outcome_of_entry(
                store,
                index=index,
                agent=entry.agent or "",  # no agent: an eval set of component cases
                identity=identities[index],
                tag=tags[index],
                baseline=entry.baseline or params.baseline,
                flow_run=ends[index],
            )
            for index, entry in enumerate(params.evals)
        ]
        return SuiteSummary(
            suite=params.suite,
            flow_run_id=flow_run_id,
            flow_run_name=flow_run_name,
            started_at=started_at,
            finished_at=finished_at,
            publish_to=params.publish_to,
            baseline=params.baseline,
            fail_on_regression=params.fail_on_regression,
            verdict=suite_verdict(outcomes),
            evals=outcomes,
        )

    return await asyncio.to_thread(collect)


@task(name="publish-suite", cache_policy=NO_CACHE)
async def publish_suite_task(
    summary: SuiteSummary, params: RegressionParams
) -> SuitePublishOutcome:
    """Write summary.json and summary.html under the output folder, then publish them
    under ``<publish_to>/regression/<suite>/``. A store that cannot take them leaves the
    local copy, and the outcome says so (never raised: the suite's verdict stands)."""
    logger = get_run_logger()
    local_dir = await asyncio.to_thread(write_suite_summary, summary, Path(params.output_dir))
    try:
        store = open_store(await publish_target(params.publish_to, params.s3))
    except Exception as exc:  # a Secret that cannot be read: the summary stays local
        outcome = SuitePublishOutcome(
            False,
            f"suite summary not published to {params.publish_to}: {exc}. "
            f"It is kept at {local_dir}.",
            local_dir,
        )
    else:
        outcome = await asyncio.to_thread(publish_suite_summary, summary, store, local_dir)
    (logger.info if outcome.published else logger.warning)(outcome.message)
    return outcome
