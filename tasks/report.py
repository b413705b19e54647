"""The report task: results.json, report.html and junit.xml written into the run folder,
case by case (memory grows with the number of cases, not trials), with the comparison when
the run was compared with a baseline."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.compare.models import RunComparison
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.stages import FoldedRun, report_stage
from agentflow_eval.report.scorecard import format_scorecard
from agentflow_eval.run.plan import RunPlan

__all__ = ["report_task"]


@task(name="report", cache_policy=NO_CACHE)
async def report_task(
    plan: RunPlan, folded: FoldedRun, comparison: RunComparison | None
) -> RunResult:
    """Write the reports and log the scorecard. Returns the run's summary without its
    trials: they are in results.json, and the flow only needs the summary."""
    run = await report_stage(plan, folded, comparison)
    # debug: the CLI prints the scorecard itself (--verbose would show it twice)
    get_run_logger().debug("\n%s\nresults in %s", format_scorecard(run), plan.paths.run_dir)
    return run
