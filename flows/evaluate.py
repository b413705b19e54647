"""The ``evaluate`` flow: load-evalset → run-trials → judge → report → publish, for one
eval set."""

from __future__ import annotations

from agentflow_eval.tasks.judge import judge_task
from agentflow_eval.tasks.load_evalset import load_evalset_task
from agentflow_eval.tasks.publish import publish_task
from agentflow_eval.tasks.report import report_task
from agentflow_eval.tasks.run_trials import run_trials_task
from agentflow_eval.tasks.support.artifacts import ProgressReporter, publish_run_artifacts
from agentflow_eval.tasks.support.rate_limits import prefect_rate_limiter
from prefect import flow
from prefect.utilities.annotations import quote

from agentflow_eval.agents.loader import load_agent
from agentflow_eval.llm.ratelimit import use_rate_limiter
from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.run.early_trials import EarlyTrials
from agentflow_eval.run.plan import RunOutcome
from agentflow_eval.run.stages import completed_keys


@flow(name="evaluate")
async def evaluate(params: EvaluateParams) -> RunOutcome:
    """Evaluate an agent on one eval set: repeated trials per case, judged, reported.

    The run always completes: a trial that crashes or hangs, or a judge that cannot
    answer, becomes a recorded result, and a store that is down leaves the report in the
    local run folder, marked for `agentflow-eval publish`. Only bad input (files, agent
    spec) fails the run, before any trial starts.
    """
    agent = load_agent(params.agent, model=params.model)
    plan = load_evalset_task(params, agent.name, getattr(agent, "model", None))

    progress = ProgressReporter.for_eval_set(plan.eval_set.eval_set_id)
    total = len(plan.eval_set.eval_cases) * plan.runs
    await progress.start(total, done=len(completed_keys(plan.paths.trials)) if plan.resumed else 0)
    # one set of per-model rate limits for the whole run: trials and judges share it
    # (trials started before the flow, by flows/local_run.py, brought theirs)
    early = EarlyTrials.find(plan.paths.run_dir)
    limiter = early.rate_limiter if early else await prefect_rate_limiter(plan.config)
    with use_rate_limiter(limiter):
        # quote(): Prefect would otherwise walk the whole plan (every case of the eval set)
        # for futures at each task call, twice (~1 s per task per 200 cases, measured)
        counts = await run_trials_task(
            quote(plan), agent, on_trial=lambda _trial: progress.advance()
        )
        progress.update(counts.written + counts.skipped)
        await progress.finish()
        await judge_task(quote(plan))
    run = await report_task(quote(plan))
    outcome = RunOutcome(run=run, run_dir=plan.paths.run_dir)
    if params.publish_to:
        published = await publish_task(plan.paths.run_dir, params.publish_to, params.s3)
        outcome.published = list(published.urls.values())
        outcome.report_url = published.report_url
        outcome.notes.append(published.message)
    await publish_run_artifacts(run, outcome.report_url)
    return outcome
