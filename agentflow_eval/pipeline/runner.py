"""The stage list, in one place: :func:`run_pipeline` chains the stages of a planned run,
whatever front door started it.

How each stage is carried out is the caller's :class:`Stages`: :class:`DirectStages` awaits
the stage functions of :mod:`agentflow_eval.pipeline.stages` (the CLI's in-process path,
``AgentEvaluator``, :func:`agentflow_eval.evaluate`); the ``evaluate`` flow passes its own,
which runs each stage inside its Prefect task run. Either way the same functions run in
the same order with the same arguments::

    async with ModelClient(RateLimiter.from_config(plan.config)) as models:
        outcome = await run_pipeline(plan, RunServices(agent, models), DirectStages())
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.compare.sequential import Ledger
from agentflow_eval.criteria.judges.cache import JudgeCache
from agentflow_eval.files.gates_json import GateRecord, write_gates_json
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline import stages
from agentflow_eval.pipeline.gates import PassRateGates, verdict_of
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.pipeline.pairs import (
    PassValues,
    first_round,
    next_keys,
    options_or_fail,
    read_waves,
    record_wave,
    replay,
)
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

__all__ = [
    "DirectStages",
    "RunServices",
    "Stages",
    "conclude",
    "measure",
    "measure_pairs",
    "run_pipeline",
]


@dataclass(frozen=True)
class RunServices:
    """What the stages are given besides the plan: the agent, the run's model client (its
    rate limits and connections, shared by the agent, the simulated user and the judges),
    the judge cache, and, when asked for, the baseline and the publish target."""

    agent: AgentUnderTest | None
    """The agent under test (``None`` for a run of component cases only)."""
    models: ModelClient
    judge_cache: JudgeCache | None = None
    baseline: BaselineOptions | None = None
    publish_to: Target | None = None
    against: AgentUnderTest | None = None
    """A paired run's baseline agent."""
    paired: PairedOptions | None = None
    """A paired run's design (``None``: the run is not paired)."""
    agreement: AgreementOptions | None = None
    """Where labels of judged content are banked, and the agreement judges are held to."""
    gates: PassRateGates = field(default_factory=PassRateGates)
    """The pass-rate gates the run is held to (none by default)."""


class Stages(Protocol):
    """How each stage is carried out (directly, or inside its Prefect task run)."""

    async def trials(
        self,
        plan: RunPlan,
        agent: AgentUnderTest | None,
        models: ModelClient,
        cache: JudgeCache | None,
    ) -> StageCounts: ...

    async def copy_trials(self, plan: RunPlan) -> StageCounts: ...

    async def paired_trials(
        self,
        plan: RunPlan,
        agents: tuple[AgentUnderTest | None, AgentUnderTest | None],
        models: ModelClient,
        keys: Sequence[TrialKey],
        wave: int,
        cache: JudgeCache | None,
    ) -> StageCounts: ...

    async def compare_pair(
        self, plan: RunPlan, run: RunResult, against: RunResult, options: PairedOptions
    ) -> RunComparison: ...

    async def judge(
        self, plan: RunPlan, models: ModelClient, cache: JudgeCache | None
    ) -> JudgeStageResult: ...

    async def aggregate(self, plan: RunPlan, agreement: AgreementOptions | None) -> FoldedRun: ...

    async def compare(
        self, plan: RunPlan, run: RunResult, options: BaselineOptions
    ) -> RunComparison: ...

    async def report(
        self, plan: RunPlan, folded: FoldedRun, comparison: RunComparison | None
    ) -> RunResult: ...

    async def publish(self, run_dir: Path, target: Target) -> PublishOutcome: ...


class DirectStages:
    """Each stage awaited as it is, in this process."""

    async def trials(
        self,
        plan: RunPlan,
        agent: AgentUnderTest | None,
        models: ModelClient,
        cache: JudgeCache | None,
    ) -> StageCounts:
        return await stages.trials_stage(plan, agent, models, cache=cache)

    async def copy_trials(self, plan: RunPlan) -> StageCounts:
        return await stages.copy_trials_stage(plan)

    async def paired_trials(
        self,
        plan: RunPlan,
        agents: tuple[AgentUnderTest | None, AgentUnderTest | None],
        models: ModelClient,
        keys: Sequence[TrialKey],
        wave: int,
        cache: JudgeCache | None,
    ) -> StageCounts:
        return await stages.paired_trials_stage(plan, agents, models, keys, cache)

    async def compare_pair(
        self, plan: RunPlan, run: RunResult, against: RunResult, options: PairedOptions
    ) -> RunComparison:
        return await stages.paired_compare_stage(plan, run, against, options)

    async def judge(
        self, plan: RunPlan, models: ModelClient, cache: JudgeCache | None
    ) -> JudgeStageResult:
        return await stages.judge_stage(plan, models, cache)

    async def aggregate(self, plan: RunPlan, agreement: AgreementOptions | None) -> FoldedRun:
        return await stages.aggregate_stage(plan, agreement)

    async def compare(
        self, plan: RunPlan, run: RunResult, options: BaselineOptions
    ) -> RunComparison:
        return await stages.compare_stage(plan, run, options)

    async def report(
        self, plan: RunPlan, folded: FoldedRun, comparison: RunComparison | None
    ) -> RunResult:
        return await stages.report_stage(plan, folded, comparison)

    async def publish(self, run_dir: Path, target: Target) -> PublishOutcome:
        return await stages.publish_stage(run_dir, target)


async def measure(plan: RunPlan, services: RunServices, runner: Stages) -> None:
    """The stages that measure the agent: its trials (a re-judged run's are copied from
    its source run; a paired run's run beside its baseline agent's, see
    :func:`measure_pairs`), then their judging."""
    if plan.against is not None:
        await measure_pairs(plan, services, runner)
        return
    if plan.meta.rejudged_from is not None:
        await runner.copy_trials(plan)
    else:
        await runner.trials(plan, services.agent, services.models, services.judge_cache)
    await runner.judge(plan, services.models, services.judge_cache)


async def measure_pairs(plan: RunPlan, services: RunServices, runner: Stages) -> None:
    """A paired run's trials and judging: the first round, then its waves (see
    :mod:`agentflow_eval.pipeline.pairs`)."""
    against, options = plan.against, options_or_fail(services.paired)
    assert against is not None
    agents = (services.agent, services.against)
    ledger = Ledger(options.design, [case.eval_id for case in plan.eval_set.eval_cases])
    values = (PassValues.of(plan.paths.judged), PassValues.of(against.paths.judged))

    async def one_round(keys: list[TrialKey], wave: int) -> None:
        await runner.paired_trials(plan, agents, services.models, keys, wave, services.judge_cache)
        for side in (plan, against):
            await runner.judge(side, services.models, services.judge_cache)
        replay(ledger, [keys], *values)

    await one_round(first_round(plan), 0)
    if not options.adaptive:
        return
    waves = read_waves(plan.paths.run_dir)
    taken = {case.eval_id: plan.runs for case in plan.eval_set.eval_cases}
    for number, keys in enumerate(waves, start=1):
        for case, index in keys:
            taken[case] = max(taken[case], index + 1)
        await one_round(keys, number)
    while keys := next_keys(ledger, taken):
        waves.append(keys)
        record_wave(plan.paths.run_dir, waves)
        await one_round(keys, len(waves))


async def conclude(plan: RunPlan, services: RunServices, runner: Stages) -> RunOutcome:
    """The stages after the measuring: aggregate the judged trials, compare with the
    baseline (when asked; a paired run with its baseline side, pair by pair), write the
    reports (a paired run's baseline side's too), publish them (when asked)."""
    folded = await runner.aggregate(plan, services.agreement)
    comparison = None
    if plan.against is not None:
        against = await runner.aggregate(plan.against, services.agreement)
        comparison = await runner.compare_pair(
            plan, folded.run, against.run, options_or_fail(services.paired)
        )
        await runner.report(plan.against, against, None)
    elif services.baseline is not None:
        comparison = await runner.compare(plan, folded.run, services.baseline)
    run = await runner.report(plan, folded, comparison)
    outcome = RunOutcome(
        run=run, run_dir=plan.paths.run_dir, trials=folded.trials, comparison=comparison
    )
    outcome.warnings = plan.warnings
    outcome.gates = verdict_of(services.gates, run, comparison)
    # in the folder before it is published, by this run or later: a run that failed a
    # gate never becomes its eval set's latest
    write_gates_json(
        plan.paths.run_dir,
        GateRecord(failed=outcome.gates.failed, reasons=outcome.gates.reasons()),
    )
    if services.publish_to is not None:
        published = await runner.publish(plan.paths.run_dir, services.publish_to)
        outcome.publish = published
        outcome.published = list(published.urls.values())
        outcome.report_url = published.report_url
        outcome.notes.append(published.message)
    return outcome


async def run_pipeline(plan: RunPlan, services: RunServices, runner: Stages) -> RunOutcome:
    """Every stage of ``plan``, in order (see the module)."""
    await measure(plan, services, runner)
    return await conclude(plan, services, runner)
