"""The run-trials task: every trial of the run, inside this one task run, so its duration,
logs and progress artifact are the trials'.

The trials run as coroutines under the run's concurrency limit, not as a task each: a
Prefect task per trial costs orchestration and API traffic of its own, which at a
thousand trials outweighs the model's latency.
"""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.criteria.judges.cache import JudgeCache
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.results import Trial
from agentflow_eval.pipeline.stages import trials_stage
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.resumable import StageCounts, completed_keys
from agentflow_eval.tasks.support.artifacts import ProgressReporter

__all__ = ["run_trials_task"]

LOG_STEPS = 10
"""Progress lines per stage in the task run's log (one each tenth of the trials)."""


@task(name="run-trials", cache_policy=NO_CACHE)
async def run_trials_task(
    plan: RunPlan,
    agent: AgentUnderTest | None,
    models: ModelClient,
    cache: JudgeCache | None = None,
) -> StageCounts:
    """Run the trials not yet in the run's trials.jsonl (simulated tools' replies kept
    in ``cache``, the run's judge cache); return what was done."""
    logger = get_run_logger()
    total = plan.total_trials
    done = len(completed_keys(plan.paths.trials)) if plan.resumed else 0
    progress = ProgressReporter.for_eval_set(plan.eval_set.eval_set_id, track=plan.meta.track)
    await progress.start(total, done=min(done, total))
    step = max(1, total // LOG_STEPS)
    tally = {"done": done, "errored": 0}
    logger.info("running %d trials (%d already done)", total - done, done)

    def on_trial(trial: Trial) -> None:
        tally["done"] += 1
        tally["errored"] += trial.error is not None
        progress.advance()
        if tally["done"] % step == 0 or tally["done"] == total:
            logger.info("trials: %d/%d done (%d errored)", tally["done"], total, tally["errored"])

    counts = await trials_stage(plan, agent, models, on_trial=on_trial, cache=cache)
    await progress.finish()
    logger.info(
        "trials: %d run (%d errored), %d already done, in %.1f s",
        counts.written,
        counts.errored,
        counts.skipped,
        counts.elapsed_s,
    )
    return counts
