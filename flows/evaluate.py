"""The ``evaluate`` flow: one run request, run by the one call every front door ends in
(:func:`agentflow_eval.pipeline.execute.execute`) with the flow's runtime
(:class:`~agentflow_eval.flows.support.runtime.PrefectRuntime`): load-evalset, then the
stage list (run-trials → judge → aggregate → (compare) → report → (publish)), each stage
in its task run; or, with ``shards`` > 1, the trials and judging split over flow runs of
its deployment. What the flow adds is how Prefect tells a run's end: artifacts, events,
and a Failed state for a failed gate.

Its parameters are the run request's fields, top-level, so the Prefect UI renders them as
a form; each one's type, title and description is in :mod:`agentflow_eval.models.request`.
Call it with ``evaluate(**request.flow_parameters())``; a front door that prepared the run
itself (the CLI) passes it as ``planned``.
"""

from __future__ import annotations

import os

from prefect import flow
from pydantic.json_schema import SkipJsonSchema

from agentflow_eval.compare.brief import comparison_lines
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.errors import RunStopped
from agentflow_eval.flows.support.review_start import start_review
from agentflow_eval.flows.support.runtime import PrefectRuntime
from agentflow_eval.flows.support.trigger import trigger_track
from agentflow_eval.models import defaults
from agentflow_eval.models.request import (
    S3,
    Against,
    AgainstModel,
    Agent,
    AgentModel,
    AgentVersion,
    AllowedAgents,
    Alpha,
    Baseline,
    Cases,
    ClearDrop,
    ConfigPath,
    CountInfrastructureErrors,
    EvalSetPath,
    FailOnRegression,
    GitSha,
    JudgeModel,
    KeepWorkdirs,
    Labels,
    Limit,
    MaxConcurrency,
    MaxCostIncrease,
    MaxFileMb,
    MaxLatencyIncrease,
    MaxPairsPerCase,
    MaxTokenIncrease,
    MaxToolCallIncrease,
    MaxTrials,
    MinCasePassRate,
    MinJudgeAgreement,
    MinPassRate,
    OutputDir,
    PublishTo,
    RejudgeFrom,
    Resume,
    ReviewSample,
    RunRequest,
    Runs,
    RunTimeout,
    S3Options,
    Secrets,
    Shard,
    Shards,
    SharedStorage,
    Track,
    TrialTimeout,
    UntilDecided,
    Workroot,
)
from agentflow_eval.pipeline.deadline import RunTimedOut
from agentflow_eval.pipeline.execute import PreparedRun, execute
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.redaction import install_log_redaction
from agentflow_eval.run.run_json import resume_params
from agentflow_eval.tasks.support.artifacts import ArtifactScope, publish_run_artifacts
from agentflow_eval.tasks.support.events import (
    emit_comparison,
    emit_completed,
    emit_judge_untrustworthy,
    emit_publish_failed,
)

__all__ = [
    "PassRateGateFailed",
    "PreparedRun",
    "RegressionGateFailed",
    "RunTimedOut",
    "evaluate",
]

_NO_S3 = S3Options()

install_log_redaction()  # the flow's log lines (terminal, Prefect's API) carry no secret


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
    min_case_pass_rate: MinCasePassRate = None,
    min_judge_agreement: MinJudgeAgreement = None,
    alpha: Alpha = 0.05,
    against: Against = None,
    against_model: AgainstModel = None,
    until_decided: UntilDecided = False,
    max_trials: MaxTrials = None,
    max_pairs_per_case: MaxPairsPerCase = None,
    clear_drop: ClearDrop = 0.2,
    max_file_mb: MaxFileMb = None,
    workroot: Workroot = None,
    keep_workdirs: KeepWorkdirs = False,
    review_sample: ReviewSample = None,
    planned: SkipJsonSchema[PreparedRun | None] = None,
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

    With `review_sample`, once the run is reported it starts a flow run of the review
    deployment (review/judges) for people to check its judges on that many trials, and
    ends without waiting for it; the summary says whether the review started.
    """
    request = await _request(locals(), planned)
    outcome = await execute(request, PrefectRuntime(), prepared=planned)
    if request.shard is not None:  # the parent publishes and reports the whole run
        return outcome
    scope = ArtifactScope.current(outcome.run.track)
    _announce(request, outcome, scope)
    after_run: list[str] = []
    if request.review_sample is not None:
        after_run.append(
            await start_review(outcome.run_dir, outcome.run.run_id, request.review_sample)
        )
        outcome.notes.extend(after_run)
    local_report = outcome.run_dir / "report.html"
    await publish_run_artifacts(
        outcome.run,
        outcome.report_url,
        local_report=local_report,
        publish_problem=outcome.publish_problem,
        scope=scope,
        comparison=outcome.comparison,
        notes=after_run,
    )
    emit_completed(
        outcome.run,
        report_url=outcome.report_url or local_report.as_uri(),
        run_dir=outcome.run_dir,
        published=None if outcome.publish is None else outcome.publish.published,
        scope=scope,
    )
    emit_judge_untrustworthy(  # the summary artifact names them too
        outcome.run,
        report_url=outcome.report_url or local_report.as_uri(),
        run_dir=outcome.run_dir,
        scope=scope,
    )
    if outcome.comparison is not None:
        emit_comparison(
            outcome.run,
            outcome.comparison,
            report_url=outcome.report_url or local_report.as_uri(),
            run_dir=outcome.run_dir,
            scope=scope,
        )
    gates = outcome.gates
    if gates.regression is not None:
        raise RegressionGateFailed(gates.regression, outcome)
    if gates.shortfalls:
        raise PassRateGateFailed(gates.shortfalls, outcome)
    return outcome


async def _request(parameters: dict[str, object], planned: PreparedRun | None) -> RunRequest:
    """The run request of this flow run's parameters, completed from the worker's
    environment; a resume takes the run's own settings (not the form's defaults), and a
    run given no track joins the history of how it was started."""
    request = RunRequest.from_flow_parameters(parameters).with_environment(os.environ)
    if request.resume and planned is None and request.shard is None:
        request = resume_params(request)
    if request.track is None and planned is None:
        request = request.updated(track=await trigger_track())
    return request


def _announce(request: RunRequest, outcome: RunOutcome, scope: ArtifactScope) -> None:
    """A publish that failed is an event of its own (the summary says it too)."""
    problem = outcome.publish_problem
    if problem is not None and request.publish_to:
        emit_publish_failed(
            outcome.run,
            target=request.publish_to,
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
    """A run that fell short of its pass-rate gates (``min_pass_rate``, the CLI's
    ``--fail-under``); its reports are written, published and announced all the same."""

    def __init__(self, shortfalls: tuple[str, ...], outcome: RunOutcome) -> None:
        self.shortfalls = shortfalls
        self.outcome = outcome
        super().__init__("; ".join(shortfalls))

    def __reduce__(
        self,
    ) -> tuple[type[PassRateGateFailed], tuple[tuple[str, ...], RunOutcome]]:
        return type(self), (self.shortfalls, self.outcome)
