"""The load-evalset task: read and check the eval set, its config and the agent, and plan
the run (its settings and folder). Bad input fails here, before any trial runs, with the
file, case and field named."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.loader import load_agent
from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.run.plan import RunOptions, RunPlan, load_inputs, plan_run

__all__ = ["load_evalset_task"]


@task(name="load-evalset", cache_policy=NO_CACHE)
def load_evalset_task(params: EvaluateParams) -> tuple[RunPlan, AgentUnderTest]:
    """The run's plan and its agent, from the flow's parameters."""
    agent = load_agent(params.agent, model=params.model)
    inputs = load_inputs(params.evalset, params.config, judge_model=params.judge_model)
    plan = plan_run(
        inputs,
        RunOptions.of(params),
        agent=agent,
        output_dir=params.output_dir,
        resume=params.resume,
        params=params,
    )
    logger = get_run_logger()
    for warning in plan.warnings:
        logger.warning(warning)
    logger.info(
        "eval set %r: %d cases × %d runs, %d trials in flight, %g s per trial; agent %s; "
        "run folder %s%s",
        plan.eval_set.eval_set_id,
        len(plan.eval_set.eval_cases),
        plan.settings.runs,
        plan.settings.max_concurrency,
        plan.settings.trial_timeout_s,
        agent.name,
        plan.paths.run_dir,
        " (resumed)" if plan.resumed else "",
    )
    return plan, agent
