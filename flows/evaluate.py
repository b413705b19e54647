"""The ``evaluate`` flow: load-evalset, then the pipeline's stage list (run-trials → judge
→ aggregate → (compare) → report → (publish), :mod:`agentflow_eval.pipeline.runner`), each
stage in its task run, for one eval set; or, with ``shards`` > 1, the trials and judging
split over flow runs of its deployment. The flow adds what only Prefect has: secrets from
blocks, rate limits shared by the pool, the judge cache in shared storage, artifacts and
events.

Its parameters are top-level, so the Prefect UI renders them as a form; each one's type,
title and description is in :mod:`agentflow_eval.models.params`, and
:class:`~agentflow_eval.models.params.EvaluateParams` holds them together for the CLI and
the run folder. Call it with ``evaluate(**params.flow_parameters())``; a front door that
planned the run itself (the CLI) passes it as ``planned``.
"""

from __future__ import annotations

import asyncio
from pathlib import PurePath

from prefect import flow, get_run_logger
from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.compare.brief import comparison_lines
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.demo import install_for as install_demo_for
from agentflow_eval.errors import RunStopped
from agentflow_eval.flows.support.trigger import trigger_track
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models import defaults
from agentflow_eval.models.params import (
    S3,
    Agent,
    AgentModel,
    AgentVersion,
    AllowedAgents,
    Baseline,
    Cases,
    ConfigPath,
    CountInfrastructureErrors,
    EvalSetPath,
    EvaluateParams,
    FailOnRegression,
    GitSha,
    JudgeModel,
    Labels,
    Limit,
    MaxConcurrency,
    MaxCostIncrease,
    MaxLatencyIncrease,
    MaxTokenIncrease,
    MaxToolCallIncrease,
    MinPassRate,
    OutputDir,
    PublishTo,
    RejudgeFrom,
    Resume,
    Runs,
    RunTimeout,
    S3Options,
    Secrets,
    Shard,
    Shards,
    ShardSpec,
    SharedStorage,
    Track,
    TrialTimeout,
)
from agentflow_eval.pipeline.deadline import RunTimedOut, within_deadline
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.pipeline.runner import RunServices, conclude, measure
from agentflow_eval.pipeline.stages import BaselineOptions
from agentflow_eval.redaction import install_log_redaction
from agentflow_eval.run.meta import models_named
from agentflow_eval.run.plan import RunHandle, RunPlan
from agentflow_eval.run.run_json import resume_params
from agentflow_eval.tasks.load_evalset import load_evalset_task
from agentflow_eval.tasks.publish import credentials_from_secret, publish_target
from agentflow_eval.tasks.shards import collect_shard_task, hand_off_shard_task, merge_shards_task
from agentflow_eval.tasks.stages import TaskStages, unwalked
from agentflow_eval.tasks.support.artifacts import ArtifactScope, publish_run_artifacts
from agentflow_eval.tasks.support.events import (
    emit_comparison,
    emit_completed,
    emit_publish_failed,
)
from agentflow_eval.tasks.support.rate_limits import prefect_rate_limiter
from agentflow_eval.tasks.support.secrets import load_secrets
from agentflow_eval.tasks.support.shards import finished_shards
from agentflow_eval.tasks.support.storage import resolve_shared_storage, shared_judge_cache

__all__ = [
    "SHARD_POLL_S",
    "PassRateGateFailed",
    "PlannedRun",
    "RegressionGateFailed",
    "RunTimedOut",
    "evaluate",
]

SHARD_POLL_S = 2.0
"""How often a sharded run asks the API whether its shard runs finished."""

_NO_S3 = S3Options()

install_log_redaction()  # the flow's log lines (terminal, Prefect's API) carry no secret


class PlannedRun(BaseModel):
    """A run the CLI planned before it started the flow: its handle (the frozen plan and
    the run folder's lock) and its agent, loaded once. The flow run's record keeps only
    the run folder."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    run_dir: str
    handle: RunHandle = Field(exclude=True)
    agent: AgentUnderTest | None = Field(exclude=True)

    @classmethod
    def of(cls, handle: RunHandle, agent: AgentUnderTest | None) -> PlannedRun:
        return cls(run_dir=str(handle.paths.run_dir), handle=handle, agent=agent)


@flow(name="evaluate")
async def evaluate(
    agent: Agent = None,
    *,  # the agent may be left out (component cases), the eval set not
    evalset: EvalSetPath,
    config: ConfigPath = None,
    runs: Runs = None,
    cases: Cases = None,
    limit: Limit = None,
    max_concurrency: MaxConcurrency = None,
    trial_timeout_s: TrialTimeout = None,
    timeout_minutes: RunTimeout = defaults.RUN_TIMEOUT_MINUTES,
    model: AgentModel = None,
    judge_model: JudgeModel = None,
    agent_version: AgentVersion = None,
    git_sha: GitSha = None,
    labels: Labels = {},  # noqa: B006 (validated into a new dict; never mutated)
    output_dir: OutputDir = defaults.OUTPUT_DIR,
    resume: Resume = None,
    rejudge_from: RejudgeFrom = None,
    publish_to: PublishTo = None,
    count_infrastructure_errors: CountInfrastructureErrors = False,
    s3: S3 = _NO_S3,
    baseline: Baseline = None,
    fail_on_regression: FailOnRegression = False,
    max_cost_increase: MaxCostIncrease = None,
    max_latency_increase: MaxLatencyIncrease = None,
    max_token_increase: MaxTokenIncrease = None,
    max_tool_call_increase: MaxToolCallIncrease = None,
    secrets: Secrets = {},  # noqa: B006
    shards: Shards = 1,
    shared_storage: SharedStorage = None,
    shard: Shard = None,
    track: Track = None,
    allowed_agents: AllowedAgents = [],  # noqa: B006 (validated into a new list)
    min_pass_rate: MinPassRate = None,
    planned: SkipJsonSchema[PlannedRun | None] = None,
) -> RunOutcome:
    """Evaluate an agent on one eval set: repeated trials per case, judged, reported.

    The run always completes: a trial that crashes or hangs, or a judge that cannot
    answer, becomes a recorded result, and a store that is down leaves the report in the
    local run folder, marked for `agentflow-eval publish` (the summary says so, and an
    `agentflow.eval.publish-failed` event is emitted). Only bad input (files, agent spec,
    secrets, a run folder in use) fails the run, before any trial starts — and a provider
    that refuses the credentials, which stops it where it is (a resume finishes it); and,
    with `fail_on_regression`, a significant regression from the baseline (or a baseline
    that cannot be read), and with `min_pass_rate`, a pass rate below it, after
    everything is written, published and announced. With `allowed_agents`, an agent
    outside the list (or none) is refused before it is imported.

    With `rejudge_from`, the trials are that finished run's, copied, and judged again with
    this eval set and config: the agent is not called.

    With `timeout_minutes`, a run still going then stops there, Failed, saying so; the
    trials it finished are kept, and a run with `resume` set to its folder finishes it.
    """
    params = EvaluateParams.from_flow_parameters(locals())
    if params.resume and planned is None and params.shard is None:
        params = resume_params(params)  # the run's own settings, not the form's defaults
    if params.track is None and planned is None:  # the history of how the run was started
        params = params.model_copy(update={"track": await trigger_track()})
    logger = get_run_logger()
    async with load_secrets(params.secrets) as loaded:
        if loaded:
            logger.info("provider keys from Prefect Secrets: %s", ", ".join(loaded))
        if planned is None:
            handle, agent_under_test = load_evalset_task(params)
        else:
            handle, agent_under_test = planned.handle, planned.agent
        # agentflow-demo/* models answer offline, whoever calls them (when the run needs them)
        install_demo_for(models_named(handle.plan.config, handle.plan.meta.agent_model))
        with handle:  # the run folder is free for a resume once the run is over
            outcome = await within_deadline(
                params.timeout_minutes,
                _evaluate_planned(params, handle.plan, agent_under_test),
                handle.plan.paths.run_dir,
            )
    if params.shard is not None:  # the parent publishes and reports the whole run
        return outcome
    scope = ArtifactScope.current(outcome.run.track)
    _announce(params, outcome, scope)
    local_report = outcome.run_dir / "report.html"
    await publish_run_artifacts(
        outcome.run,
        outcome.report_url,
        local_report=local_report,
        publish_problem=outcome.publish_problem,
        scope=scope,
        comparison=outcome.comparison,
    )
    emit_completed(
        outcome.run,
        report_url=outcome.report_url or local_report.as_uri(),
        run_dir=outcome.run_dir,
        published=None if outcome.publish is None else outcome.publish.published,
        scope=scope,
    )
    comparison = outcome.comparison
    if comparison is not None:
        emit_comparison(
            outcome.run,
            comparison,
            report_url=outcome.report_url or local_report.as_uri(),
            run_dir=outcome.run_dir,
            scope=scope,
        )
        if comparison.gate_failed:
            raise RegressionGateFailed(comparison, outcome)
    if params.min_pass_rate is not None and outcome.run.totals.pass_rate < params.min_pass_rate:
        raise PassRateGateFailed(params.min_pass_rate, outcome)
    return outcome


async def _evaluate_planned(
    params: EvaluateParams, plan: RunPlan, agent: AgentUnderTest | None
) -> RunOutcome:
    """The stage list of a planned run, each stage in its task run; a sharded run's
    trials and judging are its shards'."""
    stages = TaskStages()
    storage = await resolve_shared_storage(params.shared_storage)
    limiter = await prefect_rate_limiter(plan.config)
    async with ModelClient(limiter) as models:  # trials and judges share limits
        services = RunServices(
            agent,
            models,
            judge_cache=shared_judge_cache(plan.config.judge, storage),
            baseline=await _baseline(params),
            publish_to=await publish_target(params.publish_to, params.s3)
            if params.publish_to and params.shard is None
            else None,
        )
        if params.shards > 1 and params.shard is None:
            await _run_shards(params, plan)
            merge_shards_task(unwalked(plan), params.shards)
        else:
            await measure(plan, services, stages)
    outcome = await conclude(plan, services, stages)
    if params.shard is not None:
        await hand_off_shard_task(
            plan.paths, params.shard.parent_run_id, params.shard.index, params.shared_storage
        )
    return outcome


async def _baseline(params: EvaluateParams) -> BaselineOptions | None:
    """What the run is compared with (a shard is not compared: its parent is)."""
    if not params.baseline or params.shard is not None:
        return None
    s3 = params.s3
    return BaselineOptions(
        params.baseline,
        publish_to=params.publish_to,
        s3=s3,
        credentials=await credentials_from_secret(s3.credentials_secret)
        if s3.credentials_secret
        else None,
        fail_on_regression=params.fail_on_regression,
        tolerances=params.tolerances(),
    )


def _announce(params: EvaluateParams, outcome: RunOutcome, scope: ArtifactScope) -> None:
    """A publish that failed is an event of its own (the summary says it too)."""
    problem = outcome.publish_problem
    if problem is not None and params.publish_to:
        emit_publish_failed(
            outcome.run,
            target=params.publish_to,
            message=problem,
            run_dir=outcome.run_dir,
            scope=scope,
        )


class RegressionGateFailed(RunStopped):
    """A run with ``fail_on_regression`` regressed from its baseline (or could not be
    compared with it); its reports are written, published and announced all the same,
    and ``outcome`` says where (a front door running the flow in-process reads it)."""

    def __init__(self, record: RunComparison, outcome: RunOutcome) -> None:
        self.record = record
        self.outcome = outcome
        super().__init__(" ".join(line.strip() for line in comparison_lines(record)[:3]))

    def __reduce__(self) -> tuple[type[RegressionGateFailed], tuple[RunComparison, RunOutcome]]:
        return type(self), (self.record, self.outcome)


class PassRateGateFailed(RunStopped):
    """A run with ``min_pass_rate`` whose pass rate fell below it (the gate of the CLI's
    ``--fail-under``); its reports are written, published and announced all the same."""

    def __init__(self, min_pass_rate: float, outcome: RunOutcome) -> None:
        self.min_pass_rate = min_pass_rate
        self.outcome = outcome
        totals = outcome.run.totals
        super().__init__(
            f"pass rate {totals.pass_rate:.0%} ({totals.passed} of {totals.rated_trials} "
            f"trials) is below min_pass_rate {min_pass_rate:.0%}"
        )

    def __reduce__(self) -> tuple[type[PassRateGateFailed], tuple[float, RunOutcome]]:
        return type(self), (self.min_pass_rate, self.outcome)


async def _run_shards(params: EvaluateParams, plan: RunPlan) -> None:
    """Start a flow run of this deployment for each shard the run folder lacks, wait for
    them, and collect each finished one's results. Raises naming the shards that did not
    finish (the others are kept: resuming the run starts only those)."""
    from prefect.deployments import arun_deployment
    from prefect.runtime import deployment, flow_run

    count = params.shards
    if deployment.id is None:
        raise ValueError(
            f"shards={count} starts flow runs of this run's deployment, and this run has "
            "none; start it from a deployment (prefect deployment run ...), or use shards=1"
        )
    logger = get_run_logger()
    todo = sorted(set(range(count)) - finished_shards(plan.paths, count))
    if len(todo) < count:
        logger.info("shards already finished: %d of %d", count - len(todo), count)
    parent = plan.meta.run_id

    async def one(index: int) -> str | None:
        child = params.model_copy(
            update={
                "shards": 1,
                "resume": None,
                # a shard's own run folder sits apart from whole runs: <output>/shard-runs/
                "output_dir": str(PurePath(params.output_dir) / "shard-runs"),
                "runs": plan.settings.runs,  # every shard runs the parent's decided settings
                "max_concurrency": plan.settings.max_concurrency,
                "trial_timeout_s": plan.settings.trial_timeout_s,
                "shard": ShardSpec(index=index, count=count, parent_run_id=parent),
            }
        )
        started = await arun_deployment(
            deployment.id,
            # nulls left out: the server refuses a null for a typed parameter with a default
            parameters=child.model_dump(mode="json", exclude_none=True),
            flow_run_name=f"{flow_run.name}-shard-{index + 1}-of-{count}",
            timeout=None,
            poll_interval=SHARD_POLL_S,
        )
        state = started.state
        if state is not None and state.is_completed():
            await collect_shard_task(plan.paths, parent, index, params.shared_storage)
            return None
        return (
            f"shard {index + 1} of {count} (flow run {started.name}) ended "
            f"{state.name if state else 'without a state'}"
        )

    logger.info("starting %d shard runs of deployment %s", len(todo), deployment.name)
    problems = [p for p in await asyncio.gather(*(one(i) for i in todo)) if p]
    if problems:
        raise RuntimeError(
            "; ".join(problems)
            + f". The finished shards are kept in {plan.paths.run_dir / 'shards'}; run "
            f"this deployment with resume={plan.paths.run_dir} to run only the shards that "
            "did not finish."
        )
