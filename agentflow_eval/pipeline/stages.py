"""The stages of a run, each a function of the frozen plan and what else it needs, passed
explicitly. Each writes what it produced into the run folder, so a stopped run resumes
from the first stage whose output is missing.

=========  ================================================  ==========================
stage      takes                                             leaves
=========  ================================================  ==========================
trials     plan, agent, model client                         ``trials.jsonl``
  (or, re-judging a finished run: its trials copied, plan)
judge      plan, model client, judge cache                   ``judged.jsonl``
aggregate  plan, the label bank and agreement asked            the run's summary (folded),
                                                             its judges against labels
compare    plan, the summary, where the baseline is          ``comparison.json``
report     plan, the folded run, the comparison              results, report, JUnit
publish    the run folder, a target                          the store's copy
=========  ================================================  ==========================
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.compare.baseline import compare_with_baseline, write_run_comparison
from agentflow_eval.compare.comparison import DEFAULT_ALPHA, compare_runs
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.compare.sequential import Design, shard_budget
from agentflow_eval.criteria.judges.cache import JudgeCache
from agentflow_eval.criteria.judges.runtime import JudgeRuntime, JudgeStats
from agentflow_eval.files.case_trials import JudgedFileTrials
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.request import RunRequest, S3Options
from agentflow_eval.models.results import RunResult, Trial, TrialResult
from agentflow_eval.models.tolerances import EfficiencyTolerances
from agentflow_eval.publish.publisher import PublishOutcome, publish_run
from agentflow_eval.report.digest import TrialDigest
from agentflow_eval.report.writer import write_run_reports
from agentflow_eval.review.agreement import judge_agreement
from agentflow_eval.review.bank import LabelBank
from agentflow_eval.review.recording import gather_labels
from agentflow_eval.review.verdicts import VerdictLedger
from agentflow_eval.run.aggregate import aggregate_judged
from agentflow_eval.run.judging import judge_trials
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.resumable import StageCounts, TrialKey
from agentflow_eval.run.source_trials import copy_source_trials
from agentflow_eval.run.trials import run_paired_trials, run_trials
from agentflow_eval.storage.targets import S3Credentials, Target

__all__ = [
    "DEFAULT_MAX_PAIRS_PER_CASE",
    "AgreementOptions",
    "BaselineOptions",
    "FoldedRun",
    "JudgeStageResult",
    "PairedOptions",
    "aggregate_stage",
    "compare_stage",
    "copy_trials_stage",
    "judge_stage",
    "paired_compare_stage",
    "paired_trials_stage",
    "publish_stage",
    "report_stage",
    "trials_stage",
]


async def trials_stage(
    plan: RunPlan,
    agent: AgentUnderTest | None,
    models: ModelClient,
    *,
    on_trial: Callable[[Trial], None] | None = None,
    cache: JudgeCache | None = None,
) -> StageCounts:
    """Run every trial of ``plan`` not yet in its trials file, simulated tools' replies
    kept in ``cache`` beside the judges' (see :func:`~agentflow_eval.run.trials.run_trials`)."""
    return await run_trials(plan, agent, models, on_trial=on_trial, kept=cache)


async def copy_trials_stage(plan: RunPlan) -> StageCounts:
    """A re-judged run's trial stage: copy the source run's trials not yet in the plan's
    trials file (off the event loop: it reads the whole file); no agent runs (see
    :func:`~agentflow_eval.run.source_trials.copy_source_trials`)."""
    return await asyncio.to_thread(copy_source_trials, plan)


@dataclass(frozen=True)
class JudgeStageResult:
    """What the judge stage did, and what its judges cost."""

    counts: StageCounts
    stats: JudgeStats
    cache_location: str | None


async def judge_stage(
    plan: RunPlan, models: ModelClient, cache: JudgeCache | None
) -> JudgeStageResult:
    """Judge the trials not yet in the run's judged file, LLM judges calling through
    ``models`` (the run's limits) and answered from ``cache`` where they were before."""
    runtime = JudgeRuntime(plan.config.judge, models=models, cache=cache)
    counts = await judge_trials(plan, runtime)
    location = runtime.cache.location if runtime.cache is not None else None
    return JudgeStageResult(counts, runtime.stats, location)


class FoldedRun:
    """``judged.jsonl`` folded once: the run's summary, where each trial's line is, and
    what spans every trial (the report's charts).

    A plain class: Prefect walks dataclasses and models passed between tasks looking for
    futures, all the way down a run's cases; an object of its own type it leaves alone."""

    __slots__ = ("digest", "run", "trials")

    def __init__(self, run: RunResult, trials: JudgedFileTrials, digest: TrialDigest) -> None:
        self.run = run
        self.trials = trials
        self.digest = digest


@dataclass(frozen=True)
class AgreementOptions:
    """Where a run finds the labels of content judged before (the label bank of the
    runs it shares a store with), and the agreement its judges are held to."""

    bank: LabelBank | None = None
    min_judge_agreement: float | None = None

    @classmethod
    def of(cls, request: RunRequest, bank: LabelBank | None) -> AgreementOptions:
        return cls(bank, request.min_judge_agreement)


def _fold(plan: RunPlan, agreement: AgreementOptions) -> FoldedRun:
    digest = TrialDigest()
    verdicts = VerdictLedger()

    def on_trial(result: TrialResult) -> None:
        digest.add(result)
        verdicts.add(result)

    run, trials = aggregate_judged(
        plan.eval_set, plan.config, plan.paths.judged, plan.meta, on_trial=on_trial
    )
    source = plan.meta.rejudged_from
    gathered = gather_labels(
        plan.paths.run_dir,
        verdicts,
        bank=agreement.bank,
        sources=[Path(source.run_dir)] if source is not None else [],
    )
    run.notes += gathered.notes
    run.judge_agreement = judge_agreement(
        verdicts,
        gathered.labels,
        run_ids={run.run_id, *([source.run_id] if source is not None else [])},
        min_agreement=agreement.min_judge_agreement,
    )
    return FoldedRun(run, trials, digest)


async def aggregate_stage(plan: RunPlan, agreement: AgreementOptions | None = None) -> FoldedRun:
    """Fold the judged trials into the run's summary, once, and measure its judges
    against the labels its folder, its source run and the label bank hold for its
    judged content (off the event loop: it reads the whole file)."""
    return await asyncio.to_thread(_fold, plan, agreement or AgreementOptions())


@dataclass(frozen=True)
class BaselineOptions:
    """What to compare a run with: ``baseline`` (``latest``, a run folder, a results.json
    or an ``s3://`` location), where ``latest`` is looked up (``publish_to``), how to
    reach an S3-compatible store, whether a regression fails the run, and the efficiency
    increases that are no regression (``tolerances``; none: efficiency never gates)."""

    baseline: str
    publish_to: str | None = None
    s3: S3Options | None = None
    credentials: S3Credentials | None = None
    fail_on_regression: bool = False
    tolerances: EfficiencyTolerances | None = None
    alpha: float = DEFAULT_ALPHA

    @classmethod
    def of(
        cls, request: RunRequest, credentials: S3Credentials | None = None
    ) -> BaselineOptions | None:
        """The comparison ``request`` asks for (``None`` without a baseline)."""
        if not request.baseline:
            return None
        return cls(
            request.baseline,
            publish_to=request.publish_to,
            s3=request.s3,
            credentials=credentials,
            fail_on_regression=request.fail_on_regression,
            tolerances=request.tolerances(),
            alpha=request.alpha,
        )


@dataclass(frozen=True)
class PairedOptions:
    """How a paired run is judged case by case and overall: its sequential design (and
    budget), whether a regression fails it, the efficiency increases it tolerates."""

    design: Design
    adaptive: bool = False
    """Pairs are added after the first round to the cases not yet decided."""
    fail_on_regression: bool = False
    tolerances: EfficiencyTolerances | None = None

    @classmethod
    def of(cls, request: RunRequest, plan: RunPlan) -> PairedOptions | None:
        """The paired run ``request`` asks for (``None`` for an unpaired one); the budget
        defaults to four times the first round's trials. A shard's flags count every
        case of the run, and its budget is its cases' share of the run's
        (:func:`~agentflow_eval.compare.sequential.shard_budget`)."""
        if plan.against is None:
            return None
        return cls(
            design=Design(
                alpha=request.alpha,
                clear_drop=request.clear_drop,
                max_trials=_budget(request, plan) if request.until_decided else None,
                max_pairs_per_case=request.max_pairs_per_case or DEFAULT_MAX_PAIRS_PER_CASE,
                wave_pairs=max(1, plan.settings.max_concurrency // 2),
                # a shard counts every case of the run; a whole run, the cases it compares
                family=plan.shard_of_cases,
            ),
            adaptive=request.until_decided,
            fail_on_regression=request.fail_on_regression,
            tolerances=request.tolerances(),
        )


def _budget(request: RunRequest, plan: RunPlan) -> int:
    """The trials ``plan``'s adaptive run may spend: the run's budget (the request's, else
    four times the whole run's first round), or a shard's part of it."""
    first_round = 2 * plan.runs * plan.run_cases
    whole = request.max_trials or 4 * first_round
    return shard_budget(whole, len(plan.eval_set.eval_cases), plan.run_cases)


DEFAULT_MAX_PAIRS_PER_CASE = 100
"""The most pairs an adaptive run gives one case by default: in a simulation of 40 cases,
a cap of 80 found 0.65 of planted drops, 120 found 0.76, 200 no more."""


async def paired_trials_stage(
    plan: RunPlan,
    agents: tuple[AgentUnderTest | None, AgentUnderTest | None],
    models: ModelClient,
    keys: Sequence[TrialKey],
    cache: JudgeCache | None = None,
) -> StageCounts:
    """Run the pairs ``keys`` of a paired run, each side's trials to its own folder (see
    :func:`~agentflow_eval.run.trials.run_paired_trials`)."""
    if plan.against is None:
        raise ValueError("a paired trial stage needs a paired plan")
    return await run_paired_trials(
        plan, plan.against, agents, models, keys, seed=plan.meta.run_id, kept=cache
    )


def _compare_pair(
    plan: RunPlan, run: RunResult, against: RunResult, options: PairedOptions
) -> RunComparison:
    assert plan.against is not None
    comparison = compare_runs(
        against,
        run,
        alpha=options.design.alpha,
        detect_drop=options.design.clear_drop,
        baseline_source=str(plan.against.paths.results),
        candidate_source=str(plan.paths.results),
        tolerances=options.tolerances,
        pairing="paired",
        design=options.design,
    )
    record = RunComparison(
        baseline=f"against {against.agent}",
        fail_on_regression=options.fail_on_regression,
        comparison=comparison,
    )
    write_run_comparison(plan.paths.run_dir, record)
    return record


async def paired_compare_stage(
    plan: RunPlan, run: RunResult, against: RunResult, options: PairedOptions
) -> RunComparison:
    """Compare a paired run's candidate side with its baseline side, pair by pair, and
    write ``comparison.json``."""
    return await asyncio.to_thread(_compare_pair, plan, run, against, options)


def _compare(plan: RunPlan, run: RunResult, options: BaselineOptions) -> RunComparison:
    record = compare_with_baseline(
        run,
        options.baseline,
        publish_to=options.publish_to,
        s3=options.s3,
        credentials=options.credentials,
        candidate_source=str(plan.paths.results),
        fail_on_regression=options.fail_on_regression,
        tolerances=options.tolerances,
        alpha=options.alpha,
    )
    write_run_comparison(plan.paths.run_dir, record)
    return record


async def compare_stage(plan: RunPlan, run: RunResult, options: BaselineOptions) -> RunComparison:
    """Compare the run's summary with its baseline and write ``comparison.json``. Never
    raises for the baseline: one that cannot be read is the record's ``problem``."""
    return await asyncio.to_thread(_compare, plan, run, options)


async def report_stage(
    plan: RunPlan, folded: FoldedRun, comparison: RunComparison | None = None
) -> RunResult:
    """Write results.json, report.html and junit.xml into the run folder (off the event
    loop: rendering is CPU work); returns the run's summary without its trials."""
    await asyncio.to_thread(
        write_run_reports,
        folded.run,
        folded.trials,
        folded.digest,
        plan.paths.run_dir,
        comparison,
        min_pass_rate=plan.settings.case_pass_bar,
    )
    return folded.run


async def publish_stage(run_dir: Path, target: Target) -> PublishOutcome:
    """Copy the run folder's reports to ``target``; a store that stays down leaves the
    folder marked for a later ``agentflow-eval publish`` (see
    :func:`~agentflow_eval.publish.publisher.publish_run`)."""
    return await asyncio.to_thread(publish_run, run_dir, target)
