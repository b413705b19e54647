"""The one call that runs a run request, whatever front door built it::

    outcome = await execute(request)                          # the stages, in this process
    outcome = await execute(request, PrefectRuntime())        # each stage in its task run

:func:`execute` installs what the run needs (the offline demo model, when the run names
it), plans the run (:func:`prepare`), holds it to its deadline, runs the stage list
(:mod:`.runner`) with the services the :class:`Runtime` provides, compares, publishes,
and decides the request's gates (:mod:`.gates`). It returns one
:class:`~agentflow_eval.pipeline.outcome.RunOutcome`, which each door only renders: the
CLI prints it and picks an exit code, the flow makes artifacts, events and a state of it,
``AgentEvaluator`` raises on a failed gate.

The :class:`Runtime` is how the run is carried out, not what it does: :class:`Runtime` itself
awaits each stage in this process (the CLI's ``--no-prefect``, ``AgentEvaluator``,
:func:`agentflow_eval.evaluate`); the flow's runtime (``agentflow_eval.flows.support.
runtime``) runs each stage inside its Prefect task run and adds what only Prefect has:
provider keys from Secret blocks, rate limits shared by a pool, the judge cache in a
pool's storage, S3 credentials from a Secret block, shards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.criteria.judges.cache import InMemoryJudgeCache, JudgeCache
from agentflow_eval.demo import install_for as install_demo_for
from agentflow_eval.errors import InputError
from agentflow_eval.files.errors import first_reason
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.request import RunRequest
from agentflow_eval.pipeline.deadline import within_deadline
from agentflow_eval.pipeline.gates import PassRateGates
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.pipeline.runner import DirectStages, RunServices, Stages, conclude, measure
from agentflow_eval.pipeline.stages import AgreementOptions, BaselineOptions, PairedOptions
from agentflow_eval.review.bank import LabelBank, output_root_of
from agentflow_eval.run.folder_lock import RunFolderLock
from agentflow_eval.run.meta import models_named
from agentflow_eval.run.plan import RunHandle, RunPlan, plan_request
from agentflow_eval.run.rejudge_source import read_rejudge_source
from agentflow_eval.run.run_json import RunRecord
from agentflow_eval.storage.targets import S3Credentials, Target, target_of

__all__ = [
    "NeedsPrefect",
    "PreparedRun",
    "RunObjects",
    "Runtime",
    "execute",
    "prepare",
    "with_rejudge_source",
]


class NeedsPrefect(InputError):
    """A request asks for what only the evaluate flow reads (``what``)."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"this run uses {what}, which only the Prefect flow reads; run it through the "
            "evaluate flow"
        )
        self.what = what


@dataclass(frozen=True)
class RunObjects:
    """What a Python front door hands over as objects rather than names in the request:
    the agent, the eval set, the config. Each one given is used instead of what the
    request names (a request naming no eval-set file needs ``eval_set``)."""

    agent: AgentUnderTest | None = None
    eval_set: EvalSet | None = None
    config: EvalConfig | None = None


class PreparedRun(BaseModel):
    """A planned run: its handle (the frozen plan and the run folder's lock) and its agent,
    loaded once. A pydantic model so that a front door that prepared the run before it
    started the flow (the CLI) can pass it as the flow's ``planned`` parameter; the flow
    run's record keeps only the run folder."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    run_dir: str
    request: RunRequest = Field(exclude=True)
    """The request as planned: what it left out that its source gives filled in (a
    re-judge's eval set and config)."""
    handle: RunHandle = Field(exclude=True)
    agent: AgentUnderTest | None = Field(exclude=True)

    @classmethod
    def of(
        cls, request: RunRequest, handle: RunHandle, agent: AgentUnderTest | None
    ) -> PreparedRun:
        return cls(run_dir=str(handle.paths.run_dir), request=request, handle=handle, agent=agent)

    @property
    def plan(self) -> RunPlan:
        return self.handle.plan


def with_rejudge_source(request: RunRequest, objects: RunObjects) -> RunRequest:
    """A re-judge's request with what it leaves out taken from its source run: the eval
    set, config and judge model the source was started with. A source started from
    Python recorded none: then the eval set must be named (or, from Python, handed
    over)."""
    if not request.rejudge_from:
        return request
    source = read_rejudge_source(request.rejudge_from)
    named_here = request.evalset is not None or objects.eval_set is not None
    if not source.started_from_params and named_here:
        return request
    started = source.params()  # refused, naming the folder, for a run started from Python
    update: dict[str, str | None] = {}
    if objects.eval_set is None:
        if request.evalset is None:
            update["evalset"] = started.evalset
        if request.config is None and objects.config is None:
            update["config"] = started.config
    if request.judge_model is None:
        update["judge_model"] = started.judge_model
    return request.updated(**update) if update else request


def check_publish_target(request: RunRequest) -> None:
    """A publish target that cannot be used is refused before the run, not after every
    trial ran (:class:`~agentflow_eval.errors.InputError`)."""
    if not request.publish_to:
        return
    try:
        target_of(request.publish_to, request.s3)
    except ValueError as exc:
        raise InputError(f"publish_to {request.publish_to}: {first_reason(exc)}") from None


def prepare(
    request: RunRequest,
    objects: RunObjects | None = None,
    *,
    resume: RunRecord | None = None,
    held: RunFolderLock | None = None,
) -> PreparedRun:
    """Plan ``request`` (everything a user can fix is refused here, before any trial, a
    publish target that cannot be used included:
    :class:`~agentflow_eval.errors.InputError` and the file errors, naming file, case and
    field), and install what it needs: ``agentflow-demo/*`` models answer offline,
    whoever calls them, when the run names one. ``resume`` is the record of the folder
    being resumed when the caller read it already, ``held`` its lock when the caller took
    it already (the handle then owns it)."""
    given = objects or RunObjects()
    check_publish_target(request)
    request = with_rejudge_source(request, given)
    handle, agent = plan_request(
        request,
        agent=given.agent,
        eval_set=given.eval_set,
        config=given.config,
        resume=resume,
        held=held,
    )
    install_demo_for(models_named(handle.plan.config, handle.plan.meta.agent_model))
    return PreparedRun.of(request, handle, agent)


class Runtime:
    """How a run is carried out and what serves it. This base class is the direct way:
    each stage awaited in this process, the config's rate limits in this process, no
    secrets or shared storage to read. The flow's runtime overrides what Prefect does
    differently."""

    stages: Stages = DirectStages()

    def __init__(
        self, *, judge_cache: JudgeCache | None = None, models: ModelClient | None = None
    ) -> None:
        self._judge_cache = judge_cache
        self._models = models

    def check(self, request: RunRequest) -> None:
        """Refuse (:class:`~agentflow_eval.errors.InputError`), before anything is
        planned, a request this runtime cannot carry out: here, what only the evaluate
        flow reads (a ``--resume`` of a run a deployment started can ask for them)."""
        needs = [
            (bool(request.secrets), "secrets (provider keys from Prefect Secret blocks)"),
            (bool(request.s3.credentials_secret), "s3.credentials_secret (a Prefect Secret block)"),
            (bool(request.shared_storage), "shared_storage (a Prefect storage block)"),
            (request.shards > 1, f"shards={request.shards} (flow runs of a deployment)"),
            (request.shard is not None, "shard (a shard of a deployment's run)"),
            (
                request.review_sample is not None,
                f"review_sample={request.review_sample} (starts the review flow's deployment)",
            ),
        ]
        for needed, what in needs:
            if needed:
                raise NeedsPrefect(what)

    def provisions(self, request: RunRequest) -> AbstractAsyncContextManager[None]:
        """What the run needs set up around it and taken down after (the flow: provider
        keys from Secret blocks); nothing here."""
        return _nothing()

    def prepare(self, request: RunRequest, objects: RunObjects | None) -> PreparedRun:
        """Plan the run (the flow: inside its load-evalset task run)."""
        return prepare(request, objects)

    def model_client(self, config: EvalConfig) -> AbstractAsyncContextManager[ModelClient]:
        """The run's model client: the one given (the caller's to close), else one under
        the config's rate limits, opened and closed around the stages."""
        if self._models is not None:
            return _borrowed(self._models)
        return ModelClient(RateLimiter.from_config(config))

    async def judge_cache(self, request: RunRequest, config: EvalConfig) -> JudgeCache | None:
        """Where judge replies are kept: the cache given, else this run's memory (none
        when the config turns caching off)."""
        if not config.judge.cache:
            return None
        return self._judge_cache if self._judge_cache is not None else InMemoryJudgeCache()

    async def s3_credentials(self, request: RunRequest) -> S3Credentials | None:
        """S3 credentials beyond the standard AWS chain (the flow: a Secret block)."""
        return None

    async def label_bank(self, request: RunRequest, plan: RunPlan) -> LabelBank | None:
        """Where labels of judged content are kept across runs: the output folder the
        run's folder is in, with the runs before it (the flow: the pool's shared
        storage, when one is named)."""
        run_dir = plan.paths.run_dir
        root = output_root_of(run_dir, plan.eval_set.eval_set_id)
        return LabelBank.in_folder(root if root is not None else Path(request.output_dir))

    async def measure(self, request: RunRequest, plan: RunPlan, services: RunServices) -> None:
        """The stages that measure the agent (the flow: over shards when asked)."""
        await measure(plan, services, self.stages)

    async def concluded(self, request: RunRequest, plan: RunPlan) -> None:
        """After the reports are written (the flow: a shard hands its results over)."""


async def execute(
    request: RunRequest,
    runtime: Runtime | None = None,
    *,
    objects: RunObjects | None = None,
    prepared: PreparedRun | None = None,
) -> RunOutcome:
    """Run ``request`` (see the module): plan it (unless ``prepared``), run every stage
    within its deadline, compare, publish, and decide its gates (``outcome.gates``).
    Raises only for what stops a run: bad input (before any trial), its deadline
    (:class:`~agentflow_eval.pipeline.deadline.RunTimedOut`), refused credentials, a
    full disk; the agent's own faults are recorded in its trials."""
    how = runtime if runtime is not None else Runtime()
    how.check(request)
    async with how.provisions(request):
        ready = prepared if prepared is not None else how.prepare(request, objects)
        request = ready.request
        with ready.handle:  # the run folder is free for a resume once the run is over
            outcome = await within_deadline(
                request.timeout_minutes,
                _run_stages(request, ready, how),
                ready.plan.paths.run_dir,
            )
    return outcome  # its gates decided as it concluded, before it was published


async def _run_stages(request: RunRequest, ready: PreparedRun, how: Runtime) -> RunOutcome:
    plan = ready.plan
    credentials = await how.s3_credentials(request)
    shard = request.shard is not None  # a shard is compared and published by its parent
    async with how.model_client(plan.config) as models:  # trials and judges share limits
        services = RunServices(
            ready.agent,
            models,
            judge_cache=await how.judge_cache(request, plan.config),
            baseline=None if shard else BaselineOptions.of(request, credentials),
            publish_to=None if shard else _publish_target(request, credentials),
            against=ready.handle.against_agent,
            paired=PairedOptions.of(request, plan),
            agreement=AgreementOptions.of(request, await how.label_bank(request, plan)),
            gates=PassRateGates.of(request),
        )
        await how.measure(request, plan, services)
    outcome = await conclude(plan, services, how.stages)
    await how.concluded(request, plan)
    return outcome


def _publish_target(request: RunRequest, credentials: S3Credentials | None) -> Target | None:
    if not request.publish_to:
        return None
    return target_of(request.publish_to, request.s3, credentials)


@asynccontextmanager
async def _nothing() -> AsyncIterator[None]:
    yield


@asynccontextmanager
async def _borrowed(models: ModelClient) -> AsyncIterator[ModelClient]:
    yield models
