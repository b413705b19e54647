"""A run, decided once before any trial: its inputs, its settings, its folder and what it
records about itself.

Every front door goes through here — the CLI, the evaluate flow (from
:class:`~agentflow_eval.models.params.EvaluateParams`) and ``AgentEvaluator`` (from
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
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.loader import load_agent
from agentflow_eval.errors import InputError
from agentflow_eval.models import defaults
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.run.allowed_agents import check_agent_allowed
from agentflow_eval.run.components import ComponentTargets, load_components
from agentflow_eval.run.folder_lock import RunFolderBusy, RunFolderLock
from agentflow_eval.run.identity import RunIdentity
from agentflow_eval.run.inputs import (
    RunInputs,
    check_agent_history,
    check_agent_needed,
    check_agent_reach,
    load_inputs,
)
from agentflow_eval.run.meta import RunMeta, is_simulated, judge_model_of
from agentflow_eval.run.paths import RunPaths, new_run_id
from agentflow_eval.run.resume import ResumeMismatch, check_resume, fingerprint
from agentflow_eval.run.run_json import RunRecord, write_run_json
from agentflow_eval.run.selection import describe_selection, select_cases, shard_of
from agentflow_eval.run.settings import (
    RunOptions,
    RunSettings,
    check_trial_count,
    resolve_settings,
)
from agentflow_eval.run.trial import TrialSettings

__all__ = [
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
    "plan_from_params",
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

    @property
    def runs(self) -> int:
        return self.settings.runs

    @property
    def trial_settings(self) -> TrialSettings:
        return dataclasses.replace(
            self.settings.trial,
            tool_mocks=tuple(self.config.tool_mocks),
            unmocked_tools=self.config.unmocked_tools,
        )

    @property
    def total_trials(self) -> int:
        return len(self.eval_set.eval_cases) * self.settings.runs


class RunHandle:
    """A planned run and its folder's lock: no other process writes the folder until
    :meth:`release` (or the process's end). A context manager that releases on exit.

    A plain class, not a dataclass: a handle is held by the front door that planned the
    run and never copied into a task's parameters (the stages take :attr:`plan`)."""

    __slots__ = ("_lock", "plan")

    def __init__(self, plan: RunPlan, lock: RunFolderLock | None) -> None:
        self.plan = plan
        self._lock = lock

    @property
    def paths(self) -> RunPaths:
        return self.plan.paths

    def release(self) -> None:
        """Let go of the run folder (idempotent): call it when the run is over."""
        if self._lock is not None:
            self._lock.release()

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
    params: EvaluateParams | None = None,
    identity: RunIdentity | None = None,
) -> RunHandle:
    """Decide the run's settings and create its folder (or reopen ``resume``'s), taking
    the folder's lock first (:class:`RunFolderBusy` when another process holds it).

    Before any folder exists, the run is checked against what runs it: the component
    cases' functions are loaded (:func:`~.components.load_components`), and ``agent``
    (``None`` when every case is a component case) must be able to run the others: take
    their seeded histories and tool mocks.

    A resumed run must be the run the folder holds: the same eval set (id and cases), the
    same judging config and the same runs per case (:func:`~.resume.check_resume`);
    anything else is refused with :class:`ResumeMismatch`, the folder left as it was.
    ``params``, when the run was started from them, are written to the folder's
    ``run.json`` so that the folder is its own resume point.
    """
    settings = resolve_settings(options, inputs.config)
    selected, subset_note = _selected(inputs, options)
    check_trial_count(settings.runs, len(selected.eval_set.eval_cases))
    check_agent_needed(agent, selected)
    if agent is not None:
        check_agent_reach(agent, selected)
        check_agent_history(agent, selected)
    components = load_components(
        selected.eval_set, selected.evalset_path or selected.eval_set.eval_set_id
    )
    record: RunRecord | None = None
    if resume is not None:
        record = resume if isinstance(resume, RunRecord) else RunRecord.read(resume)
        paths = RunPaths(record.run_dir)
        lock = RunFolderLock.acquire(paths.run_dir)
        try:
            check_resume(record, selected, options)
            runs_per_case = record.runs_per_case(settings.runs)
        except BaseException:
            lock.release()
            raise
        settings = replace(settings, runs=runs_per_case)
        run_id, started = record.run_id, record.started_at
    else:
        started = datetime.now(UTC)
        run_id = new_run_id()
        paths = RunPaths.new(
            Path(output_dir).resolve(), selected.eval_set.eval_set_id, run_id, started
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
    agent_model: str | None = getattr(agent, "model", None)
    judge_model = judge_model_of(selected.config)
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
        agent_spec=params.agent if params is not None else None,
        track=(params.track if params is not None else None) or defaults.TRACK,
    )
    try:
        write_run_json(
            paths, meta, fingerprint=fingerprint(selected), params=params, earlier=record
        )
    except BaseException:
        lock.release()
        raise
    plan = RunPlan(
        eval_set=selected.eval_set,
        config=selected.config,
        paths=paths,
        meta=meta,
        settings=settings,
        warnings=tuple(inputs.warnings),
        resumed=record is not None,
        components=components,
    )
    return RunHandle(plan, lock)


def plan_from_params(
    params: EvaluateParams,
    *,
    environ: Mapping[str, str],
    resume: RunRecord | None = None,
) -> tuple[RunHandle, AgentUnderTest | None]:
    """The agent (``None`` when the parameters name none: every case is then a
    component case) and the planned run that ``params`` ask for (a shard's plan holds
    only its share of the cases), the run's identity completed from ``environ`` (CI
    variables). Every front door that starts from parameters plans here: the evaluate
    flow's load task, and the CLI before it starts the flow. ``resume`` is the record of
    ``params.resume``'s folder when the caller has read it already. An agent outside
    ``params.allowed_agents`` is refused before it is imported."""
    check_agent_allowed(params.agent, params.allowed_agents)
    if not params.agent and params.model:
        raise InputError(f"model {params.model!r} is for an agent, and no agent was given")
    agent = load_agent(params.agent, model=params.model) if params.agent else None
    inputs = load_inputs(params.evalset, params.config, judge_model=params.judge_model)
    handle = plan_run(
        inputs,
        RunOptions.of(params),
        agent=agent,
        output_dir=params.output_dir,
        resume=resume if resume is not None else params.resume,
        params=params,
        identity=RunIdentity.of(
            environ,
            agent_version=params.agent_version,
            git_sha=params.git_sha,
            labels=params.labels,
        ),
    )
    return handle, agent


def _selected(inputs: RunInputs, options: RunOptions) -> tuple[RunInputs, str | None]:
    """``inputs`` with only the cases ``options`` choose (``--case``, ``--limit``, then a
    shard's part), and the note a subset run carries."""
    if not options.cases and options.limit is None and options.shard is None:
        return inputs, None
    eval_set = inputs.eval_set
    chosen = select_cases(eval_set, options.cases, options.limit)
    note = None
    if len(chosen.eval_cases) < len(eval_set.eval_cases):
        note = describe_selection(chosen, len(eval_set.eval_cases), options.cases, options.limit)
    if options.shard is not None:
        chosen = shard_of(chosen, *options.shard)
    return replace(inputs, eval_set=chosen), note
