"""The run-pairs task: one round of a paired run (the first round, or one wave of an
adaptive run), inside this one task run, so its duration and logs are that round's:
trial ``j`` of the candidate's agent and of the baseline's on the same case started
together, each side's trials to its own run folder."""

from __future__ import annotations

from collections.abc import Sequence

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.criteria.judges.cache import JudgeCache
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.pipeline.stages import paired_trials_stage
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.resumable import StageCounts, TrialKey

__all__ = ["run_pairs_task"]


@task(name="run-pairs", cache_policy=NO_CACHE, task_run_name="run-pairs-{label}")
async def run_pairs_task(
    plan: RunPlan,
    agents: tuple[AgentUnderTest | None, AgentUnderTest | None],
    models: ModelClient,
    keys: Sequence[TrialKey],
    label: str,
    cache: JudgeCache | None = None,
) -> StageCounts:
    """Run the pairs ``keys`` of the paired run (``label``: the round, in the task run's
    name)."""
    logger = get_run_logger()
    cases = len({case for case, _ in keys})
    logger.info("%s: %d pairs over %d case(s)", label, len(keys), cases)
    counts = await paired_trials_stage(plan, agents, models, keys, cache)
    logger.info(
        "%s: %d trials run (%d errored), %d already done, in %.1f s",
        label,
        counts.written,
        counts.errored,
        counts.skipped,
        counts.elapsed_s,
    )
    return counts
