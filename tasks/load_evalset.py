"""Load stage: read and validate the eval set and config, create the run folder."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.run.early_trials import EarlyTrials
from agentflow_eval.run.plan import RunPlan, plan_run


@task(name="load-evalset", cache_policy=NO_CACHE)
def load_evalset_task(params: EvaluateParams, agent_name: str, agent_model: str | None) -> RunPlan:
    """Bad files fail here, before any trial runs, with file, case and field named."""
    plan = plan_run(params, agent_name=agent_name, agent_model=agent_model)
    logger = get_run_logger()
    for warning in plan.warnings:
        logger.warning(warning)
    if EarlyTrials.find(plan.paths.run_dir) is not None:
        state = " (its trials started before the flow run, in this process)"
    else:
        state = " (resumed)" if plan.resumed else ""
    logger.info(
        "eval set %r: %d cases × %d runs; run folder %s%s",
        plan.eval_set.eval_set_id,
        len(plan.eval_set.eval_cases),
        plan.runs,
        plan.paths.run_dir,
        state,
    )
    return plan
