"""The load-evalset task: read and check the eval set, its config and the agent, and plan
the run (its settings, its folder and what it records about the agent). Bad input fails
here, before any trial runs, with the file, case and field named."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.loader import load_agent
from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.run.plan import RunOptions, RunPlan, load_inputs, plan_run
from agentflow_eval.run.selection import select_cases
from agentflow_eval.tasks.support.identity import run_identity
from agentflow_eval.tasks.support.shards import shard_of

__all__ = ["load_evalset_task"]


@task(name="load-evalset", cache_policy=NO_CACHE)
def load_evalset_task(params: EvaluateParams) -> tuple[RunPlan, AgentUnderTest]:
    """The run's plan and its agent, from the flow's parameters. A shard's plan holds
    only its share of the cases."""
    agent = load_agent(params.agent, model=params.model)
    inputs = load_inputs(params.evalset, params.config, judge_model=params.judge_model)
    if params.shard is not None:  # the shards split the run's cases (--case, --limit)
        chosen = select_cases(inputs.eval_set, params.cases, params.limit)
        inputs.eval_set = shard_of(chosen, params.shard.index, params.shard.count)
    plan = plan_run(
        inputs,
        RunOptions.of(params),
        agent=agent,
        output_dir=params.output_dir,
        resume=params.resume,
        params=params,
    )
    identity = run_identity(params)
    plan.meta.agent_version = identity.agent_version
    plan.meta.git_sha = identity.git_sha
    plan.meta.labels = identity.labels
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
        agent.name,
        f" version {identity.agent_version}" if identity.agent_version else "",
        plan.paths.run_dir,
        " (resumed)" if plan.resumed else "",
    )
    return plan, agent
