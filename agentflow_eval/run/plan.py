"""A run, decided once before any trial: its inputs, its settings, its folder and what it
records about itself.

Every front door goes through here — the CLI, the evaluate flow (from
:class:`~agentflow_eval.models.request.RunRequest`) and ``AgentEvaluator`` (from
objects) — so configuration means the same wherever a run starts::

    inputs = load_inputs(evalset_path, config_path)      # or RunInputs.of(eval_set, config)
    with plan_run(inputs, RunOptions(runs=3), agent=agent, output_dir="eval-results") as run:
        ...                                              # run.plan, run.paths

:func:`plan_run` returns a :class:`RunHandle`: the frozen :class:`RunPlan` the stages are
given, and the run folder's lock, held until the handle is released. The pieces live in
their own modules: settings (:mod:`.settings`), inputs and their checks (:mod:`.inputs`),
folder paths (:mod:`.paths`), what the run records (:mod:`.meta`, :mod:`.identity`), the
lock (:mod:`.folder_lock`), resume checks (:mod:`.resume`) and ``run.json``
(:mod:`.run_json`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.loader import SupportsWithModel, load_agent
from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.errors import InputError
from agentflow_eval.files.loading import max_file_bytes
from agentflow_eval.models import defaults
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.injection import payload_catalogue
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.results import PairedWith
from agentflow_eval.run.agent_code import RunSubject, canonical_spec, source_digest
from agentflow_eval.run.allowed_agents import check_agent_allowed
from agentflow_eval.run.check_functions import load_check_functions
from agentflow_eval.run.components import ComponentTargets, load_components
from agentflow_eval.run.descriptors import fit_descriptors
from agentflow_eval.run.environment_factory import EnvironmentFactory, load_environment
from agentflow_eval.run.folder_lock import RunFolderBusy, RunFolderLock
from agentflow_eval.run.identity import RunIdentity
from agentflow_eval.run.inputs import (
    RunInputs,
    check_agent_history,
    check_agent_mcp,
    check_agent_needed,
    check_agent_reach,
    load_inputs,
)
from agentflow_eval.run.meta import RunMeta, is_simulated, judge_model_of
from agentflow_eval.run.paths import RunPaths, new_run_id
from agentflow_eval.run.rejudge_source import RejudgeSource, read_rejudge_source
from agentflow_eval.run.resumable import completed_keys
from agentflow_eval.run.resume import (
    ResumeMismatch,
    check_resume,
    check_stage_files,
    fingerprint,
)
from agentflow_eval.run.run_json import RunRecord, record_elapsed, write_run_json
from agentflow_eval.run.selection import describe_selection, select_cases, shard_of
from agentflow_eval.run.settings import (
    RunOptions,
    RunSettings,
    check_trial_count,
    resolve_settings,
)
from agentflow_eval.run.simulation_check import check_agent_simulates
from agentflow_eval.run.trial import TrialSettings

__all__ = [
    "AGAINST_FOLDER",
    "ResumeMismatch",
    "RunFolderBusy",
    "RunHandle",
    "RunInputs",
    "RunMeta",
    "RunOptions",
    "RunPaths",
    "RunPlan",
    "RunSettings",
    "load_inputs",
    "plan_request",
    "plan_run",
]


@dataclass(frozen=True)
class RunPlan:
    """Everything the stages need, decided once at the start of a run."""

    eval_set: EvalSet
    config: EvalConfig
    paths: RunPaths
    meta: RunMeta
    settings: RunSettings
    warnings: tuple[str, ...] = ()
    resumed: bool = False
    components: ComponentTargets = field(default_factory=ComponentTargets)
    """The function each component case calls, loaded when the run was planned."""
    environment: EnvironmentFactory | None = None
    """The function that sets up each agent trial's own environment (the config's
    ``environment``, else the eval set's), loaded when the run was planned."""
    check_functions: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    """The functions the cases' end-state checks call, by spec, loaded then too."""
    against: RunPlan | None = None
    """For a paired run: the baseline side's plan (its run folder is ``against/`` in
    this run's), whose agent runs beside this run's trial by trial."""
    shard_of_cases: int | None = None
    """For a shard of a sharded run: the cases of the whole run (``eval_set`` holds only
    the shard's share). A paired shard's verdicts and budget are reckoned against it."""

    @property
    def runs(self) -> int:
        return self.settings.runs

    @property
    def run_cases(self) -> int:
        """The cases of the whole run this plan is part of: its own, or for a shard, the
        sharded run's."""
        if self.shard_of_cases is not None:
            return self.shard_of_cases
        return len(self.eval_set.eval_cases)

    @property
    def trial_settings(self) -> TrialSettings:
        return dataclasses.replace(
            self.settings.trial,
            tool_mocks=tuple(self.config.tool_mocks),
            unmocked_tools=self.config.unmocked_tools,
            injection_payloads=payload_catalogue(self.config.injection_payloads),
            environment=self.environment,
            check_functions=self.check_functions,
            mcp_servers=tuple(s for s in self.config.mcp_servers if s.scope == "trial"),
        )

    @property
    def total_trials(self) -> int:
        return len(self.eval_set.eval_cases) * self.settings.runs


class RunHandle:
    """A planned run and its folder's lock: no other process writes the folder until
    :meth:`release` (or the process's end). A context manager that releases on exit.

    A plain class, not a dataclass: a handle is held by the front door that planned the
    run and never copied into a task's parameters (the stages take :attr:`plan`)."""

    __slots__ = ("_against", "_lock", "against_agent", "plan")

    def __init__(
        self,
        plan: RunPlan,
        lock: RunFolderLock | None,
        against: RunHandle | None = None,
        against_agent: AgentUnderTest | None = None,
    ) -> None:
        self.plan = plan
        self._lock = lock
        self._against = against
        self.against_agent = against_agent
        """A paired run's baseline agent (loaded with the plan)."""

    @property
    def paths(self) -> RunPaths:
        return self.plan.paths

    def release(self) -> None:
        """Let go of the run folder (idempotent): call it when the run is over. The time
        this session spent is added to the folder's ``run.json`` first, so a resume
        counts it."""
        if self._against is not None:
            self._against.release()
        if self._lock is not None and self._lock.held:
            record_elapsed(self.plan.paths, self.plan.meta)
            self._lock.release()

    def paired(self, against: RunHandle, agent: AgentUnderTest | None, adaptive: bool) -> RunHandle:
        """This run with ``against`` as its baseline side: each plan names the other's
        run; the handle holds both folders' locks."""
        meta = self.plan.meta
        mine = replace(
            meta,
            paired_with=PairedWith(
                run_id=against.plan.meta.run_id, side="candidate", adaptive=adaptive
            ),
        )
        plan = replace(self.plan, meta=mine, against=against.plan)
        return RunHandle(plan, self._lock, against, agent)

    def __enter__(self) -> RunHandle:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"RunHandle({str(self.plan.paths.run_dir)!r})"


def plan_run(
    inputs: RunInputs,
    options: RunOptions,
    *,
    agent: AgentUnderTest | None,
    output_dir: str | Path = defaults.OUTPUT_DIR,
    resume: str | Path | RunRecord | None = None,
    params: RunRequest | None = None,
    identity: RunIdentity | None = None,
    rejudge: RejudgeSource | None = None,
    held: RunFolderLock | None = None,
    folder: Path | None = None,
    paired_with: PairedWith | None = None,
) -> RunHandle:
    """Decide the run's settings and create its folder (or reopen ``resume``'s), taking
    the folder's lock first (:class:`RunFolderBusy` when another process holds it).

    With ``rejudge``, the run judges that finished run's stored trials again instead of
    running an agent (``agent`` is not used): it has the source's cases (all of them must
    be in ``inputs``' eval set) and runs per case, and says what the source's results say
    about the agent; the plan's ``meta.rejudged_from`` names the source.

    Before any folder exists, the run is checked against what runs it: the component
    cases' functions are loaded (:func:`~.components.load_components`), so is the
    environment function (:func:`~.environment_factory.load_environment`), and ``agent``
    (``None`` when every case is a component case) must be able to run the others: take
    their seeded histories and tool mocks.

    The run's concurrency is fitted to the process's file-descriptor limit
    (:func:`~.descriptors.fit_descriptors`: the soft limit raised, else the concurrency
    lowered, with a warning in the plan's ``warnings``).

    A resumed run must be the run the folder holds: the same eval set (id and cases), the
    same judging config and the same runs per case (:func:`~.resume.check_resume`);
    anything else is refused with :class:`ResumeMismatch`, the folder left as it was.
    ``params``, when the run was started from them, are written to the folder's
    ``run.json`` so that the folder is its own resume point. ``held`` is ``resume``'s
    lock when the caller took it already (before anything slow started); the handle
    then owns it. ``folder`` puts a new run in that folder rather than a new one under
    ``output_dir`` (a paired run's baseline side); ``paired_with`` names the run it is
    paired with.
    """
    if rejudge is not None:
        agent = None  # the trials are the source's
        inputs = rejudge.inputs_for(inputs)
        options = replace(options, runs=rejudge.runs_per_case)
    settings = resolve_settings(options, inputs.config)
    selected, subset_note, run_cases = _selected(inputs, options)
    check_trial_count(settings.runs, len(selected.eval_set.eval_cases))
    components = ComponentTargets()
    environment: EnvironmentFactory | None = None
    check_functions: dict[str, Callable[..., Any]] = {}
    if rejudge is None:
        check_agent_needed(agent, selected)
        if agent is not None:
            check_agent_reach(agent, selected)
            check_agent_simulates(agent, selected)
            check_agent_history(agent, selected)
            check_agent_mcp(agent, selected)
        components = load_components(
            selected.eval_set, selected.evalset_path or selected.eval_set.eval_set_id
        )
        environment = load_environment(
            selected.eval_set,
            selected.config,
            evalset_source=selected.evalset_path or selected.eval_set.eval_set_id,
            config_source=selected.config_path or "the config",
        )
        check_functions = load_check_functions(
            selected.eval_set, selected.evalset_path or selected.eval_set.eval_set_id
        )
    agent_model: str | None = getattr(agent, "model", None)
    judge_model = judge_model_of(selected.config)
    subject = _subject(agent, params, agent_model, judge_model)
    record: RunRecord | None = None
    if resume is not None:
        record = resume if isinstance(resume, RunRecord) else RunRecord.read(resume)
        paths = RunPaths(record.run_dir)
        lock = _resumed_lock(paths.run_dir, held)
        try:
            check_resume(record, selected, options, subject)
            check_stage_files(paths)
            runs_per_case = record.runs_per_case(settings.runs)
        except BaseException:
            lock.release()
            raise
        settings = replace(settings, runs=runs_per_case)
        run_id, started = record.run_id, record.started_at
    else:
        started = datetime.now(UTC)
        run_id = new_run_id()
        paths = (
            RunPaths(folder.resolve())
            if folder is not None
            else RunPaths.new(
                Path(output_dir).resolve(), selected.eval_set.eval_set_id, run_id, started
            )
        )
        try:
            paths.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file in the way, a read-only or virtual file system
            raise InputError(
                f"output folder {output_dir}: cannot create the run folder there "
                f"({(exc.strerror or str(exc)).lower()})"
            ) from None
        lock = RunFolderLock.acquire(paths.run_dir)
    who = identity if identity is not None else RunIdentity()
    meta = RunMeta(
        run_id=run_id,
        agent=agent.name if agent is not None else ", ".join(components.specs),
        started_at=started,
        runs_per_case=settings.runs,
        agent_model=agent_model,
        judge_model=judge_model,
        simulated=is_simulated(agent_model, judge_model),
        count_infrastructure_errors=options.count_infrastructure_errors,
        notes=(subset_note,) if subset_note else (),
        agent_version=who.agent_version,
        git_sha=who.git_sha,
        labels=dict(who.labels),
        earlier_s=record.elapsed_s if record is not None else 0.0,
        agent_spec=params.agent if params is not None else None,
        track=options.track or defaults.TRACK,
        paired_with=paired_with,
    )
    if rejudge is not None:
        meta = _rejudged_meta(meta, rejudge)
    try:
        write_run_json(
            paths,
            meta,
            fingerprint=fingerprint(selected, subject),
            params=params,
            earlier=record,
        )
    except BaseException:
        lock.release()
        raise
    # the file descriptors the concurrency needs, found before the first trial opens any
    descriptors = fit_descriptors(settings.max_concurrency, selected.config.judge.max_concurrency)
    settings = replace(settings, max_concurrency=descriptors.max_concurrency)
    plan = RunPlan(
        eval_set=selected.eval_set,
        config=selected.config,
        paths=paths,
        meta=meta,
        settings=settings,
        warnings=(*inputs.warnings, *filter(None, [descriptors.warning])),
        resumed=record is not None,
        components=components,
        environment=environment,
        check_functions=check_functions,
        shard_of_cases=run_cases if options.shard is not None else None,
    )
    return RunHandle(plan, lock)


def plan_request(
    request: RunRequest,
    *,
    agent: AgentUnderTest | None = None,
    eval_set: EvalSet | None = None,
    config: EvalConfig | None = None,
    resume: RunRecord | None = None,
    held: RunFolderLock | None = None,
) -> tuple[RunHandle, AgentUnderTest | None]:
    """The planned run that ``request`` asks for (a shard's plan holds only its share of
    the cases) and its agent (``None`` when there is none: every case is then a component
    case). Every front door plans here, through the one call
    (:func:`agentflow_eval.pipeline.execute.prepare`).

    What the request names is loaded here: the agent from its spec (one outside
    ``request.allowed_agents`` is refused before it is imported), the eval set and config
    from their files. A Python front door may hand over objects instead: ``agent``,
    ``eval_set`` (then the request names no eval-set file) and ``config``; a run so
    started is not resumable from its folder's ``run.json``, which then records no
    request. ``resume`` is the record of ``request.resume``'s folder when the caller has
    read it already, ``held`` its lock when the caller took it already."""
    rejudge = read_rejudge_source(request.rejudge_from) if request.rejudge_from else None
    if rejudge is not None and request.shards > 1:
        raise InputError(
            "shards: a re-judge (rejudge_from) runs no agent, so there are no trials to "
            "split; set shards to 1"
        )
    if request.paired and rejudge is not None:
        raise InputError(
            "against: a paired run runs both agents side by side in one run; it cannot "
            "re-judge a run"
        )
    if rejudge is None and agent is None:
        check_agent_allowed(request.agent, request.allowed_agents)
    if request.model and rejudge is None and not request.agent:
        why = "it was given as an object" if agent is not None else "no agent was given"
        raise InputError(f"model {request.model!r} is for an agent, and {why}")
    if agent is None and request.agent and rejudge is None:  # a re-judge's trials are its source's
        agent = load_agent(request.agent, model=request.model)
    inputs = _inputs(request, eval_set, config)
    from_files = eval_set is None and config is None and (agent is None or bool(request.agent))
    handle = plan_run(
        inputs,
        RunOptions.of(request),
        agent=agent,
        output_dir=request.output_dir,
        resume=resume if resume is not None else request.resume,
        params=request if from_files else None,
        identity=RunIdentity(
            agent_version=request.agent_version,
            git_sha=request.git_sha,
            labels=dict(request.labels),
        ),
        rejudge=rejudge,
        held=held,
    )
    if request.paired and rejudge is None:
        try:
            against, against_agent = _plan_against(request, inputs, agent, handle.plan)
            handle = handle.paired(against, against_agent, request.until_decided)
        except BaseException:
            handle.release()
            raise
    return handle, agent


AGAINST_FOLDER = "against"
"""A paired run's baseline side: a run folder of its own inside the paired run's."""


def _plan_against(
    request: RunRequest, inputs: RunInputs, agent: AgentUnderTest | None, candidate: RunPlan
) -> tuple[RunHandle, AgentUnderTest]:
    """The baseline side of a paired run: ``request.against`` (or the candidate's own
    agent) on ``request.against_model`` (else its own model), planned in the candidate's
    folder (``against/``; reopened on a resume), with the candidate's settings."""
    if request.against:
        check_agent_allowed(request.against, request.allowed_agents)
        against = load_agent(request.against, model=request.against_model)
    elif request.agent:
        against = load_agent(request.agent, model=request.against_model)
    elif agent is not None and request.against_model:
        if not isinstance(agent, SupportsWithModel):
            raise InputError(
                f"against_model {request.against_model!r} needs an agent that can take "
                f"another model (a with_model() method); {agent.name} cannot"
            )
        against = agent.with_model(request.against_model)
    else:
        raise InputError("against_model needs an agent to run on it")
    folder = candidate.paths.run_dir / AGAINST_FOLDER
    record = RunRecord.read(folder) if (folder / "run.json").is_file() else None
    if candidate.resumed and record is None and completed_keys(candidate.paths.trials):
        raise InputError(
            f"{candidate.paths.run_dir}: the run was not paired when it started; resume it "
            "without against"
        )
    handle = plan_run(
        inputs,
        replace(RunOptions.of(request), runs=candidate.settings.runs),
        agent=against,
        resume=record,
        identity=RunIdentity(labels=dict(request.labels)),
        folder=folder,
        paired_with=PairedWith(
            run_id=candidate.meta.run_id, side="baseline", adaptive=request.until_decided
        ),
    )
    return handle, against


def _inputs(request: RunRequest, eval_set: EvalSet | None, config: EvalConfig | None) -> RunInputs:
    """The run's eval set and config: the objects given, else the files the request
    names; the request's judge model over the config's."""
    max_bytes = max_file_bytes(request.max_file_mb)
    if eval_set is None:
        if request.evalset is None:
            raise InputError("evalset: the eval set to run is required (a file or folder)")
        return load_inputs(
            request.evalset,
            config if config is not None else request.config,
            judge_model=request.judge_model,
            max_file_bytes=max_bytes,
        )
    chosen = config
    if chosen is None and request.config:
        chosen = load_config(request.config, max_bytes=max_bytes)
    if request.judge_model:
        chosen = (chosen if chosen is not None else EvalConfig.default()).model_copy(deep=True)
        chosen.judge.model = request.judge_model
    return RunInputs.of(eval_set, chosen)


def _rejudged_meta(meta: RunMeta, source: RejudgeSource) -> RunMeta:
    """``meta`` of a run that judges ``source``'s trials again: the agent, its model and
    identity are the source's (they made the trials); the labels given now are added."""
    return replace(
        meta,
        agent=source.agent,
        agent_model=source.agent_model,
        simulated=is_simulated(source.agent_model, meta.judge_model),
        agent_version=source.agent_version,
        git_sha=source.git_sha,
        labels={**source.labels, **meta.labels},
        notes=(source.note, *meta.notes),
        rejudged_from=source.named,
    )


def _resumed_lock(run_dir: Path, held: RunFolderLock | None) -> RunFolderLock:
    """The resumed folder's lock: the one the caller holds, else taken now."""
    if held is None:
        return RunFolderLock.acquire(run_dir)
    if not held.held or held.run_dir.resolve() != run_dir:
        raise ValueError(f"the lock given is not held on {run_dir}")
    return held


def _subject(
    agent: AgentUnderTest | None,
    params: RunRequest | None,
    agent_model: str | None,
    judge_model: str | None,
) -> RunSubject:
    """What the run measures: the agent as its spec names it (its source file digested),
    or by its name when it was given as an object."""
    spec = canonical_spec(params.agent) if params is not None and params.agent else None
    name = spec or (agent.name if agent is not None else None)
    return RunSubject(
        agent=name, code=source_digest(spec), agent_model=agent_model, judge_model=judge_model
    )


def _selected(inputs: RunInputs, options: RunOptions) -> tuple[RunInputs, str | None, int]:
    """``inputs`` with only the cases ``options`` choose (``--case``, ``--limit``, then a
    shard's part), the note a subset run carries, and the cases chosen before a shard
    took its part (the whole run's)."""
    if not options.cases and options.limit is None and options.shard is None:
        return inputs, None, len(inputs.eval_set.eval_cases)
    eval_set = inputs.eval_set
    chosen = select_cases(eval_set, options.cases, options.limit)
    note = None
    if len(chosen.eval_cases) < len(eval_set.eval_cases):
        note = describe_selection(chosen, len(eval_set.eval_cases), options.cases, options.limit)
    run_cases = len(chosen.eval_cases)
    if options.shard is not None:
        chosen = shard_of(chosen, *options.shard)
    return replace(inputs, eval_set=chosen), note, run_cases
