"""The load-evalset task: read and check the eval set, its config and the agent, and plan
the run (its settings, its folder and what it records about the agent). Bad input fails
here, before any trial runs, with the file, case and field named."""

from __future__ import annotations

import os

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.run.plan import RunHandle, plan_from_params

__all__ = ["load_evalset_task"]


@task(name="load-evalset", cache_policy=NO_CACHE)
def load_evalset_task(params: EvaluateParams) -> tuple[RunHandle, AgentUnderTest | None]:
    """The run's plan and its agent, from the flow's parameters."""
    handle, agent = plan_from_params(params, environ=os.environ)
    plan = handle.plan
    logger = get_run_logger()
    for warning in plan.warnings:
        logger.warning(warning)
    logger.info(
        "eval set %r%s: %d cases × %d runs, %d trials in flight, %g s per trial; agent %s%s; "
        "run folder %s%s",
        plan.eval_set.eval_set_id,
        f" (shard {params.shard.index + 1} of {params.shard.count})" if params.shard else "",
        len(plan.eval_set.eval_cases),
        plan.settings.runs,
        plan.settings.max_concurrency,
        plan.settings.trial_timeout_s,
        plan.meta.agent,
        f" version {plan.meta.agent_version}" if plan.meta.agent_version else "",
        plan.paths.run_dir,
        " (resumed)" if plan.resumed else "",
    )
    return handle, agent
