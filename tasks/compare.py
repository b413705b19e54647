"""The compare task: the run against its baseline, after the report.

It loads the baseline (``latest``: the last completed run of this eval set published to
the run's target, never this run), compares, writes ``comparison.json`` beside
results.json, and writes report.html and junit.xml again with the comparison in them.
A baseline that cannot be loaded never fails the run: the record says why, and the flow
states it in the summary and emits an event."""

from __future__ import annotations

import asyncio

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.compare.baseline import compare_with_baseline, write_run_comparison
from agentflow_eval.compare.brief import comparison_lines
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.models.params import S3Options
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.writer import write_compared_reports
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.storage.targets import S3Credentials
from agentflow_eval.tasks.publish import credentials_from_secret

__all__ = ["compare_task"]


def _compare_and_write(
    plan: RunPlan,
    run: RunResult,
    baseline: str,
    publish_to: str | None,
    s3: S3Options,
    credentials: S3Credentials | None,
    fail_on_regression: bool,
) -> RunComparison:
    record = compare_with_baseline(
        run,
        baseline,
        publish_to=publish_to,
        s3=s3,
        credentials=credentials,
        candidate_source=str(plan.paths.results),
        fail_on_regression=fail_on_regression,
    )
    write_run_comparison(plan.paths.run_dir, record)
    write_compared_reports(plan.eval_set, plan.config, plan.meta, plan.paths, run, record)
    return record


@task(name="compare", cache_policy=NO_CACHE)
async def compare_task(
    plan: RunPlan,
    run: RunResult,
    baseline: str,
    publish_to: str | None,
    s3: S3Options,
    fail_on_regression: bool,
) -> RunComparison:
    """Compare the run with ``baseline`` and write the comparison into the run folder's
    files (off the event loop: reading the baseline and re-rendering are blocking work)."""
    credentials = (
        await credentials_from_secret(s3.credentials_secret) if s3.credentials_secret else None
    )
    record = await asyncio.to_thread(
        _compare_and_write, plan, run, baseline, publish_to, s3, credentials, fail_on_regression
    )
    logger = get_run_logger()
    text = "\n".join(comparison_lines(record))
    if record.problem is not None and record.problem.kind == "unavailable":
        logger.warning(text)
    else:
        logger.info(text)
    return record
