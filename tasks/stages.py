"""The pipeline's stages carried out as Prefect tasks: :class:`TaskStages` gives
:func:`agentflow_eval.pipeline.runner.run_pipeline` each stage's task, so the evaluate
flow runs the stage list every front door runs, each stage inside its own task run."""

from __future__ import annotations

from pathlib import Path

from prefect.utilities.annotations import quote

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.criteria.judges.cache import JudgeCache
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.stages import BaselineOptions, FoldedRun, JudgeStageResult
from agentflow_eval.publish.publisher import PublishOutcome
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.resumable import StageCounts
from agentflow_eval.storage.targets import Target
from agentflow_eval.tasks.aggregate import aggregate_task
from agentflow_eval.tasks.compare import compare_task
from agentflow_eval.tasks.judge import judge_task
from agentflow_eval.tasks.publish import publish_task
from agentflow_eval.tasks.report import report_task
from agentflow_eval.tasks.run_trials import run_trials_task

__all__ = ["TaskStages"]


class TaskStages:
    """Each stage in its Prefect task run. Plans and results go in ``quote()``d: a plan
    holds the whole eval set, and Prefect would otherwise walk every case of it looking
    for futures at each task call."""

    async def trials(
        self, plan: RunPlan, agent: AgentUnderTest, models: ModelClient
    ) -> StageCounts:
        return await run_trials_task(quote(plan), agent, models)

    async def judge(
        self, plan: RunPlan, models: ModelClient, cache: JudgeCache | None
    ) -> JudgeStageResult:
        return await judge_task(quote(plan), models, cache)

    async def aggregate(self, plan: RunPlan) -> FoldedRun:
        return await aggregate_task(quote(plan))

    async def compare(
        self, plan: RunPlan, run: RunResult, options: BaselineOptions
    ) -> RunComparison:
        return await compare_task(quote(plan), quote(run), options)

    async def report(
        self, plan: RunPlan, folded: FoldedRun, comparison: RunComparison | None
    ) -> RunResult:
        return await report_task(quote(plan), folded, quote(comparison))

    async def publish(self, run_dir: Path, target: Target) -> PublishOutcome:
        return await publish_task(run_dir, target)
