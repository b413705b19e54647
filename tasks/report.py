"""The report task: fold judged trials into the run's results and write results.json,
report.html and junit.xml into the run folder, case by case (memory grows with the
number of cases, not trials)."""

from __future__ import annotations

import asyncio

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.models.results import RunResult
from agentflow_eval.report.scorecard import format_scorecard
from agentflow_eval.report.writer import write_run_reports
from agentflow_eval.run.plan import RunPlan

__all__ = ["report_task"]


@task(name="report", cache_policy=NO_CACHE)
async def report_task(plan: RunPlan) -> RunResult:
    """Write the reports (off the event loop: rendering is CPU work) and log the scorecard.

    Returns the run's summary without its trials: they are in results.json, and the
    flow only needs the summary."""
    run = await asyncio.to_thread(
        write_run_reports, plan.eval_set, plan.config, plan.meta, plan.paths
    )
    # debug: the CLI prints the scorecard itself (--verbose would show it twice)
    get_run_logger().debug("\n%s\nresults in %s", format_scorecard(run), plan.paths.run_dir)
    return run
