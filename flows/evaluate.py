"""The ``evaluate`` flow: load-evalset → run-trials → judge → report → publish, for one
eval set."""

from __future__ import annotations

from prefect import flow
from prefect.utilities.annotations import quote

from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.redaction import install_log_redaction
from agentflow_eval.run.outcome import RunOutcome
from agentflow_eval.tasks.judge import judge_task
from agentflow_eval.tasks.load_evalset import load_evalset_task
from agentflow_eval.tasks.publish import publish_task
from agentflow_eval.tasks.report import report_task
from agentflow_eval.tasks.run_trials import run_trials_task
from agentflow_eval.tasks.support.artifacts import publish_run_artifacts
from agentflow_eval.tasks.support.rate_limits import prefect_rate_limiter

__all__ = ["evaluate"]

install_log_redaction()  # the flow's log lines (terminal, Prefect's API) carry no secret


@flow(name="evaluate")
async def evaluate(params: EvaluateParams) -> RunOutcome:
    """Evaluate an agent on one eval set: repeated trials per case, judged, reported.

    The run always completes: a trial that crashes or hangs, or a judge that cannot
    answer, becomes a recorded result, and a store that is down leaves the report in the
    local run folder, marked for `agentflow-eval publish`. Only bad input (files, agent
    spec, a run folder in use) fails the run, before any trial starts — and a provider
    that refuses the credentials, which stops it where it is (a resume finishes it).
    """
    plan, agent = load_evalset_task(params)
    # quote(): the plan holds the whole eval set; without it Prefect would walk every
    # case of it looking for futures at each task call
    limiter = await prefect_rate_limiter(plan.config)
    try:
        async with ModelClient(limiter) as models:  # trials and judges share the limits
            await run_trials_task(quote(plan), agent, models)
            await judge_task(quote(plan), models)
        run = await report_task(quote(plan))
    finally:
        plan.release()  # the run folder is free for a resume
    outcome = RunOutcome(run=run, run_dir=plan.paths.run_dir)
    if params.publish_to:
        published = await publish_task(plan.paths.run_dir, params.publish_to, params.s3)
        outcome.published = list(published.urls.values())
        outcome.report_url = published.report_url
        outcome.notes.append(published.message)
    await publish_run_artifacts(run, outcome.report_url)
    return outcome
