"""Report stage: fold judged trials into the run's results and write results.json,
report.html and junit.xml into the run folder."""

from __future__ import annotations

import asyncio

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.jsonl import iter_records
from agentflow_eval.report import write_html, write_junit, write_results_json
from agentflow_eval.results import RunResult, TrialResult
from agentflow_eval.run_plan import RunPlan
from agentflow_eval.runner import aggregate
from agentflow_eval.scorecard import format_scorecard


def build_report(plan: RunPlan) -> RunResult:
    """Aggregate the judged trials and write the three report files."""
    run = aggregate(
        plan.eval_set, plan.config, iter_records(plan.paths.judged, TrialResult), plan.meta
    )
    write_results_json(run, plan.paths.results)
    write_html(run, plan.paths.run_dir / "report.html", plan.eval_set)
    write_junit(run, plan.paths.run_dir / "junit.xml")
    return run


@task(name="report", cache_policy=NO_CACHE)
async def report_task(plan: RunPlan) -> RunResult:
    """Write the reports (off the event loop: rendering is CPU work) and log the scorecard.

    Returns the run's summary without its trials: they are in results.json, and Prefect
    walks a task's return value (about 1.2 s per 1,000 trials, measured)."""
    run = await asyncio.to_thread(build_report, plan)
    get_run_logger().info("\n%s\nresults in %s", format_scorecard(run), plan.paths.run_dir)
    return run.model_copy(update={"trials": []})
