"""Report stage: fold judged trials into the run's results and write them out."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.jsonl import iter_records
from agentflow_eval.results import RunResult, TrialResult
from agentflow_eval.run_plan import RunPlan
from agentflow_eval.runner import aggregate
from agentflow_eval.scorecard import format_scorecard


@task(name="report", cache_policy=NO_CACHE)
def report_task(plan: RunPlan) -> RunResult:
    """Aggregate, write results.json, and log the scorecard."""
    run = aggregate(
        plan.eval_set, plan.config, iter_records(plan.paths.judged, TrialResult), plan.meta
    )
    plan.paths.results.write_text(run.model_dump_json(indent=2), encoding="utf-8")
    get_run_logger().info("\n%s\nresults in %s", format_scorecard(run), plan.paths.run_dir)
    return run
