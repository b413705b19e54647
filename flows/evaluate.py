"""The ``evaluate`` flow: load-evalset → run-trials → judge → report → (compare) →
publish, for one eval set; or, with ``shards`` > 1, the same split over flow runs of its
deployment. With a ``baseline``, the compare task puts the run against it.

Its parameters are top-level, so the Prefect UI renders them as a form; each one's type,
title and description is in :mod:`agentflow_eval.models.params`, and
:class:`~agentflow_eval.models.params.EvaluateParams` holds them together for the CLI and
the run folder. Call it with ``evaluate(**params.flow_parameters())``.
"""

from __future__ import annotations

import asyncio
from pathlib import PurePath

from prefect import flow, get_run_logger
from prefect.utilities.annotations import quote

from agentflow_eval.compare.models import RunComparison
from agentflow_eval.errors import RunStopped
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models import defaults
from agentflow_eval.models.params import (
    S3,
    Agent,
    AgentModel,
    AgentVersion,
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
    OutputDir,
    PublishTo,
    Resume,
    Runs,
    S3Options,
    Secrets,
    Shard,
    Shards,
    ShardSpec,
    SharedStorage,
    TrialTimeout,
)
from agentflow_eval.redaction import install_log_redaction
from agentflow_eval.run.outcome import RunOutcome
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.tasks.compare import compare_task
from agentflow_eval.tasks.judge import judge_task
from agentflow_eval.tasks.load_evalset import load_evalset_task
from agentflow_eval.tasks.publish import publish_task
from agentflow_eval.tasks.report import report_task
from agentflow_eval.tasks.run_trials import run_trials_task
from agentflow_eval.tasks.shards import collect_shard_task, hand_off_shard_task, merge_shards_task
from agentflow_eval.tasks.support.artifacts import ArtifactScope, publish_run_artifacts
from agentflow_eval.tasks.support.events import (
    emit_comparison,
    emit_completed,
    emit_publish_failed,
)
from agentflow_eval.tasks.support.rate_limits import prefect_rate_limiter
from agentflow_eval.tasks.support.secrets import load_secrets
from agentflow_eval.tasks.support.shards import finished_shards
from agentflow_eval.tasks.support.storage import resolve_shared_storage

__all__ = ["SHARD_POLL_S", "RegressionGateFailed", "evaluate"]

SHARD_POLL_S = 2.0
"""How often a sharded run asks the API whether its shard runs finished."""

_NO_S3 = S3Options()

install_log_redaction()  # the flow's log lines (terminal, Prefect's API) carry no secret


@flow(name="evaluate")
async def evaluate(
    agent: Agent,
    evalset: EvalSetPath,
    config: ConfigPath = None,
    runs: Runs = None,
    cases: Cases = None,
    limit: Limit = None,
    max_concurrency: MaxConcurrency = None,
    trial_timeout_s: TrialTimeout = None,
    model: AgentModel = None,
    judge_model: JudgeModel = None,
    agent_version: AgentVersion = None,
    git_sha: GitSha = None,
    labels: Labels = {},  # noqa: B006 (validated into a new dict; never mutated)
    output_dir: OutputDir = defaults.OUTPUT_DIR,
    resume: Resume = None,
    publish_to: PublishTo = None,
    count_infrastructure_errors: CountInfrastructureErrors = False,
    s3: S3 = _NO_S3,
    baseline: Baseline = None,
    fail_on_regression: FailOnRegression = False,
    secrets: Secrets = {},  # noqa: B006
    shards: Shards = 1,
    shared_storage: SharedStorage = None,
    shard: Shard = None,
) -> RunOutcome:
    """Evaluate an agent on one eval set: repeated trials per case, judged, reported.

    The run always completes: a trial that crashes or hangs, or a judge that cannot
    answer, becomes a recorded result, and a store that is down leaves the report in the
    local run folder, marked for `agentflow-eval publish` (the summary says so, and an
    `agentflow.eval.publish-failed` event is emitted). Only bad input (files, agent spec,
    secrets, a run folder in use) fails the run, before any trial starts — and a provider
    that refuses the credentials, which stops it where it is (a resume finishes it); and,
    with `fail_on_regression`, a significant regression from the baseline (or a baseline
    that cannot be read), after everything is written, published and announced.
    """
    params = EvaluateParams.from_flow_parameters(locals())
    logger = get_run_logger()
    async with load_secrets(params.secrets) as loaded:
        if loaded:
            logger.info("provider keys from Prefect Secrets: %s", ", ".join(loaded))
        plan, agent_under_test = load_evalset_task(params)
        try:
            if params.shards > 1 and params.shard is None:
                await _run_shards(params, plan)
                merge_shards_task(quote(plan), params.shards)
            else:
                storage = (
                    await resolve_shared_storage(params.shared_storage)
                    if params.shared_storage
                    else None
                )
                # quote(): the plan holds the whole eval set; without it Prefect would
                # walk every case of it looking for futures at each task call
                limiter = await prefect_rate_limiter(plan.config)
                async with ModelClient(limiter) as models:  # trials and judges share limits
                    await run_trials_task(quote(plan), agent_under_test, models)
                    await judge_task(quote(plan), models, storage)
            run = await report_task(quote(plan))
        finally:
            plan.release()  # the run folder is free for a resume
    outcome = RunOutcome(run=run, run_dir=plan.paths.run_dir)
    if params.shard is not None:  # the parent publishes and reports the whole run
        await hand_off_shard_task(
            plan.paths, params.shard.parent_run_id, params.shard.index, params.shared_storage
        )
        return outcome

    comparison = None
    if params.baseline:
        comparison = await compare_task(
            quote(plan),
            quote(run),
            params.baseline,
            params.publish_to,
            params.s3,
            params.fail_on_regression,
        )
        outcome.comparison = comparison

    scope = ArtifactScope.current()
    problem = None
    published: bool | None = None
    if params.publish_to:
        result = await publish_task(plan.paths.run_dir, params.publish_to, params.s3)
        outcome.published = list(result.urls.values())
        outcome.report_url = result.report_url
        outcome.notes.append(result.message)
        published = result.published
        if not result.published:
            problem = result.message
            emit_publish_failed(
                run,
                target=params.publish_to,
                message=result.message,
                run_dir=plan.paths.run_dir,
                scope=scope,
            )
    local_report = plan.paths.run_dir / "report.html"
    await publish_run_artifacts(
        run,
        outcome.report_url,
        local_report=local_report,
        publish_problem=problem,
        scope=scope,
        comparison=comparison,
    )
    emit_completed(
        run,
        report_url=outcome.report_url or local_report.as_uri(),
        run_dir=plan.paths.run_dir,
        published=published,
        scope=scope,
    )
    if comparison is not None:
        emit_comparison(
            run,
            comparison,
            report_url=outcome.report_url or local_report.as_uri(),
            run_dir=plan.paths.run_dir,
            scope=scope,
        )
        if comparison.gate_failed:
            raise RegressionGateFailed(comparison, outcome)
    return outcome


class RegressionGateFailed(RunStopped):
    """A run with ``fail_on_regression`` regressed from its baseline (or could not be
    compared with it); its reports are written, published and announced all the same,
    and ``outcome`` says where (a front door running the flow in-process reads it)."""

    def __init__(self, record: RunComparison, outcome: RunOutcome) -> None:
        from agentflow_eval.compare.brief import comparison_lines

        self.record = record
        self.outcome = outcome
        super().__init__(" ".join(line.strip() for line in comparison_lines(record)[:3]))

    def __reduce__(self) -> tuple[type[RegressionGateFailed], tuple[RunComparison, RunOutcome]]:
        return type(self), (self.record, self.outcome)


async def _run_shards(params: EvaluateParams, plan: RunPlan) -> None:
    """Start a flow run of this deployment for each shard the run folder lacks, wait for
    them, and collect each finished one's results. Raises naming the shards that did not
    finish (the others are kept: resuming the run starts only those)."""
    from prefect.deployments import run_deployment
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
        started = await run_deployment(
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
