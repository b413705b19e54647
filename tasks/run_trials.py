"""Trial stage: every (case × trial) as a coroutine under one concurrency limit, inside
this single task. One Prefect task per trial measured 3–5× slower than the model latency
at 1,000–2,000 trials; coroutines under a limit come within ~1.1× of it."""

from __future__ import annotations

from collections.abc import Callable

from agentflow_eval.tasks.support.rate_limits import prefect_rate_limiter
from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.llm.ratelimit import current_rate_limiter
from agentflow_eval.models.results import Trial
from agentflow_eval.run.early_trials import EarlyTrials
from agentflow_eval.run.plan import RunPlan, run_planned_trials
from agentflow_eval.run.stages import StageCounts


@task(name="run-trials", cache_policy=NO_CACHE)
async def run_trials_task(
    plan: RunPlan,
    agent: AgentUnderTest,
    on_trial: Callable[[Trial], None] | None = None,
) -> StageCounts:
    """Run the trials not yet in the run's trials.jsonl; return what was done.

    When this process started the run's trials before the flow (the CLI does while
    Prefect's temporary server boots), join them instead. Model calls follow the run's
    rate limiter when the flow bound one (so trials and judges share it), else one built
    here from the config's ``rate_limits``.
    """
    logger = get_run_logger()
    early = EarlyTrials.find(plan.paths.run_dir)
    if early is not None:
        logger.info(
            "joining the trials started %.1f s ago, before the flow run (%d finished)",
            early.running_s,
            early.finished,
        )
        counts = await early.join(on_trial)
    else:
        limiter = current_rate_limiter() or await prefect_rate_limiter(plan.config)
        counts = await run_planned_trials(plan, agent, on_trial=on_trial, rate_limiter=limiter)
    logger.info(
        "trials: %d run (%d errored), %d already done, in %.1f s",
        counts.written,
        counts.errored,
        counts.skipped,
        counts.elapsed_s,
    )
    return counts
