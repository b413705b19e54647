"""Trial stage: every (case × trial) as a coroutine under one concurrency limit, inside
this single task. One Prefect task per trial measured 3–5× slower than the model latency
at 1,000–2,000 trials; coroutines under a limit come within ~1.1× of it."""

from __future__ import annotations

from collections.abc import Callable

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.ratelimit import current_rate_limiter
from agentflow_eval.results import Trial
from agentflow_eval.run_plan import RunPlan
from agentflow_eval.runner import StageCounts, run_trials
from agentflow_eval.simulator import turn_source_factory
from tasks.rate_limits import prefect_rate_limiter


@task(name="run-trials", cache_policy=NO_CACHE)
async def run_trials_task(
    plan: RunPlan,
    agent: AgentUnderTest,
    on_trial: Callable[[Trial], None] | None = None,
) -> StageCounts:
    """Run the trials not yet in the run's trials.jsonl; return what was done.

    Model calls follow the run's rate limiter when the flow bound one (so trials and
    judges share it), else one built here from the config's ``rate_limits``.
    """
    limiter = current_rate_limiter() or await prefect_rate_limiter(plan.config)
    counts = await run_trials(
        agent,
        plan.eval_set,
        plan.paths.trials,
        runs=plan.runs,
        max_concurrency=plan.max_concurrency,
        settings=plan.trial_settings,
        turn_source_for=turn_source_factory(plan.config),
        on_trial=on_trial,
        rate_limiter=limiter,
    )
    get_run_logger().info(
        "trials: %d run (%d errored), %d already done, in %.1f s",
        counts.written,
        counts.errored,
        counts.skipped,
        counts.elapsed_s,
    )
    return counts
