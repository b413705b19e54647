"""The load-evalset task: read and check the eval set, its config and the agent, and plan
the run (its settings, its folder and what it records about the agent). Bad input fails
here, before any trial runs, with the file, case and field named."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.models.request import RunRequest
from agentflow_eval.pipeline.execute import PreparedRun, prepare

__all__ = ["load_evalset_task"]


@task(name="load-evalset", cache_policy=NO_CACHE)
def load_evalset_task(request: RunRequest) -> PreparedRun:
    """The run's plan and its agent, from the flow's run request."""
    prepared = prepare(request)
    plan = prepared.plan
    logger = get_run_logger()
    for warning in plan.warnings:
        logger.warning(warning)
    logger.info(
        "eval set %r%s: %d cases × %d runs, %d trials in flight, %g s per trial; agent %s%s; "
        "run folder %s%s",
        plan.eval_set.eval_set_id,
        f" (shard {request.shard.index + 1} of {request.shard.count})" if request.shard else "",
        len(plan.eval_set.eval_cases),
        plan.settings.runs,
        plan.settings.max_concurrency,
        plan.settings.trial_timeout_s,
        plan.meta.agent,
        f" version {plan.meta.agent_version}" if plan.meta.agent_version else "",
        plan.paths.run_dir,
        " (resumed)" if plan.resumed else "",
    )
    return prepared
