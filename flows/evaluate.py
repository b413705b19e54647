"""The ``evaluate`` flow: load-evalset → run-trials → judge → report for one eval set."""

from __future__ import annotations

from prefect import flow

from agentflow_eval.agents.loader import load_agent
from agentflow_eval.params import EvaluateParams
from agentflow_eval.run_plan import RunOutcome
from tasks.judge import judge_task
from tasks.load_evalset import load_evalset_task
from tasks.report import report_task
from tasks.run_trials import run_trials_task


@flow(name="evaluate", log_prints=True)
async def evaluate(params: EvaluateParams) -> RunOutcome:
    """Evaluate an agent on one eval set: repeated trials per case, judged, reported.

    The run always completes: a trial that crashes or hangs, or a judge that cannot
    answer, becomes a recorded result. Only bad input (files, agent spec) fails the run.
    """
    agent = load_agent(params.agent, model=params.model)
    plan = load_evalset_task(params, agent.name, getattr(agent, "model", None))
    await run_trials_task(plan, agent)
    await judge_task(plan)
    run = report_task(plan)
    return RunOutcome(run=run, run_dir=plan.paths.run_dir)
