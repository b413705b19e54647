"""The pipeline's stages carried out as Prefect tasks: :class:`TaskStages` gives
:func:`agentflow_eval.pipeline.runner.run_pipeline` each stage's task, so the evaluate
flow runs the stage list every front door runs, each stage inside its own task run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar, cast

from prefect.utilities.annotations import quote

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.criteria.judges.cache import JudgeCache
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.stages import (
    AgreementOptions,
    BaselineOptions,
    FoldedRun,
    JudgeStageResult,
    PairedOptions,
)
from agentflow_eval.publish.publisher import PublishOutcome
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.resumable import StageCounts, TrialKey
from agentflow_eval.storage.targets import Target
from agentflow_eval.tasks.aggregate import aggregate_task
from agentflow_eval.tasks.compare import compare_pair_task, compare_task
from agentflow_eval.tasks.copy_trials import copy_trials_task
from agentflow_eval.tasks.judge import judge_task
from agentflow_eval.tasks.publish import publish_task
from agentflow_eval.tasks.report import report_task
from agentflow_eval.tasks.run_pairs import run_pairs_task
from agentflow_eval.tasks.run_trials import run_trials_task

__all__ = ["TaskStages", "unwalked"]

T = TypeVar("T")


def unwalked(value: T) -> T:
    """``value`` passed to a task as it is: Prefect does not walk it looking for futures
    (a plan holds the whole eval set; a run, every case)."""
    return cast(T, quote(value))


class TaskStages:
    """Each stage in its Prefect task run; plans and results go :func:`unwalked`."""

    async def trials(
        self,
        plan: RunPlan,
        agent: AgentUnderTest | None,
        models: ModelClient,
        cache: JudgeCache | None,
    ) -> StageCounts:
        return await run_trials_task(unwalked(plan), agent, models, cache)

    async def copy_trials(self, plan: RunPlan) -> StageCounts:
        return await copy_trials_task(unwalked(plan))

    async def paired_trials(
        self,
        plan: RunPlan,
        agents: tuple[AgentUnderTest | None, AgentUnderTest | None],
        models: ModelClient,
        keys: Sequence[TrialKey],
        wave: int,
        cache: JudgeCache | None,
    ) -> StageCounts:
        label = f"wave-{wave}" if wave else "first-round"
        return await run_pairs_task(unwalked(plan), agents, models, unwalked(keys), label, cache)

    async def compare_pair(
        self, plan: RunPlan, run: RunResult, against: RunResult, options: PairedOptions
    ) -> RunComparison:
        return await compare_pair_task(unwalked(plan), unwalked(run), unwalked(against), options)

    async def judge(
        self, plan: RunPlan, models: ModelClient, cache: JudgeCache | None
    ) -> JudgeStageResult:
        return await judge_task(unwalked(plan), models, cache)

    async def aggregate(self, plan: RunPlan, agreement: AgreementOptions | None) -> FoldedRun:
        return await aggregate_task(unwalked(plan), agreement)

    async def compare(
        self, plan: RunPlan, run: RunResult, options: BaselineOptions
    ) -> RunComparison:
        return await compare_task(unwalked(plan), unwalked(run), options)

    async def report(
        self, plan: RunPlan, folded: FoldedRun, comparison: RunComparison | None
    ) -> RunResult:
        return await report_task(unwalked(plan), folded, unwalked(comparison))

    async def publish(self, run_dir: Path, target: Target) -> PublishOutcome:
        return await publish_task(run_dir, target)
