"""A run, decided once before any trial: its inputs, its settings and its folder.

Every front door goes through here — the CLI and the evaluate flow (from
:class:`~agentflow_eval.models.params.EvaluateParams`), ``AgentEvaluator`` and
:func:`agentflow_eval.run.pipeline.evaluate` (from objects) — so configuration means the
same wherever a run starts:

    inputs = load_inputs(evalset_path, config_path)      # or RunInputs(eval_set, config)
    plan = plan_run(inputs, RunOptions(runs=3), agent=agent, output_dir="eval-results")

A setting comes from the caller's :class:`RunOptions`, else the config file, else
:mod:`agentflow_eval.run.defaults`. The plan is then handed to each stage
(:mod:`~agentflow_eval.run.trials`, :mod:`~agentflow_eval.run.judging`, the report
writer), which take everything else they need as arguments.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.files.naming import safe_id
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.run import defaults
from agentflow_eval.run.trial import TrialSettings

__all__ = [
    "RunInputs",
    "RunMeta",
    "RunOptions",
    "RunPaths",
    "RunPlan",
    "RunSettings",
    "check_criteria",
    "check_scenarios",
    "judge_model_of",
    "load_inputs",
    "new_run_id",
    "params_from_run_dir",
    "plan_run",
    "resolve_settings",
]


# ----------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class RunOptions:
    """What a caller asked of a run; ``None`` leaves a setting to the config, then to the
    defaults."""

    runs: int | None = None
    max_concurrency: int | None = None
    trial_timeout_s: float | None = None
    workroot: Path | None = None
    """Where trials' own working directories go (default: the system's temporary folder)."""
    keep_workdirs: bool = False
    """Keep each trial's working directory after the trial (to look at what tools wrote)."""
    cases: tuple[str, ...] = ()
    """Only the cases whose id matches one of these patterns (:mod:`.selection`)."""
    limit: int | None = None
    """Only the first ``limit`` cases (after ``cases``)."""

    def __post_init__(self) -> None:
        for name, value, low in (
            ("runs", self.runs, 1),
            ("max_concurrency", self.max_concurrency, 1),
            ("limit", self.limit, 1),
        ):
            if value is not None and value < low:
                raise ValueError(f"{name} must be at least {low}, got {value}")
        if self.trial_timeout_s is not None and self.trial_timeout_s <= 0:
            raise ValueError(f"trial_timeout_s must be positive, got {self.trial_timeout_s}")

    @classmethod
    def of(cls, params: EvaluateParams) -> RunOptions:
        return cls(
            runs=params.runs,
            max_concurrency=params.max_concurrency,
            trial_timeout_s=params.trial_timeout_s,
            cases=tuple(params.cases or ()),
            limit=params.limit,
        )


@dataclass(frozen=True)
class RunSettings:
    """The settings a run goes with, every one decided."""

    runs: int
    max_concurrency: int
    trial_timeout_s: float
    workroot: Path | None = None
    keep_workdirs: bool = False


def resolve_settings(options: RunOptions, config: EvalConfig) -> RunSettings:
    """``options``, else ``config``, else :mod:`agentflow_eval.run.defaults`."""
    return RunSettings(
        runs=options.runs or config.runs or defaults.RUNS,
        max_concurrency=options.max_concurrency
        or config.max_concurrency
        or defaults.MAX_CONCURRENCY,
        trial_timeout_s=options.trial_timeout_s
        or config.trial_timeout_s
        or defaults.TRIAL_TIMEOUT_S,
        workroot=options.workroot,
        keep_workdirs=options.keep_workdirs,
    )


# ------------------------------------------------------------------------------- inputs


@dataclass
class RunInputs:
    """A validated eval set and config, with the warnings met while reading them. Made by
    :func:`load_inputs` from files or by :meth:`of` from objects; both check the config's
    criteria."""

    eval_set: EvalSet
    config: EvalConfig
    warnings: list[str] = field(default_factory=list)
    config_path: Path | None = None

    @classmethod
    def of(cls, eval_set: EvalSet, config: EvalConfig | None = None) -> RunInputs:
        """Inputs from objects; no config means ADK's default criteria."""
        chosen = config if config is not None else EvalConfig.default()
        check_criteria(chosen, None)
        check_scenarios(eval_set, chosen, f"eval set {eval_set.eval_set_id!r}", None)
        return cls(eval_set, chosen)


def load_inputs(
    evalset: str | Path,
    config: str | Path | EvalConfig | None = None,
    *,
    judge_model: str | None = None,
) -> RunInputs:
    """Read and check the eval set at ``evalset`` and its config: ``config`` when given
    (a file or a config object), else the ``test_config.json`` beside the eval set, else
    ADK's default criteria. ``judge_model`` replaces the config's run-wide judge model.

    Raises :class:`agentflow_eval.files.errors.EvalFileError` naming file, case and field.
    """
    from agentflow_eval.files.loading import (
        find_config_for,
        load_config,
        load_evalset,
        unjudged_warnings,
    )

    loaded = load_evalset(evalset)
    config_path: Path | None = None
    if isinstance(config, EvalConfig):
        run_config = config.model_copy(deep=True)
    else:
        config_path = Path(config) if config else find_config_for(evalset)
        run_config = load_config(config_path) if config_path else EvalConfig.default()
    if judge_model:
        run_config.judge.model = judge_model
    check_criteria(run_config, config_path)
    check_scenarios(loaded.eval_set, run_config, evalset, config_path)
    warnings = [
        *loaded.warnings,
        *run_config.load_warnings,
        *unjudged_warnings(loaded.eval_set, run_config),
    ]
    return RunInputs(loaded.eval_set, run_config, warnings, config_path)


def check_criteria(config: EvalConfig, config_path: str | Path | None) -> None:
    """Build the config's criteria once, before any trial runs: an unknown name or a
    custom check that does not load is an error naming the file and the criterion, not a
    traceback after the whole trial phase."""
    from agentflow_eval.criteria.registry import build_criterion
    from agentflow_eval.files.errors import EvalFileError

    for name, options in config.criteria.items():
        try:
            build_criterion(name, options, config)
        except ValueError as exc:
            raise EvalFileError(
                config_path or "(config)", str(exc), field=f"criteria.{name}"
            ) from None


def check_scenarios(
    eval_set: EvalSet, config: EvalConfig, source: str | Path, config_path: Path | None
) -> None:
    """A simulated-user scenario case cannot run without the config's
    ``user_simulator_config`` (the model that plays the user): refuse it when the inputs
    load, naming each such case, not trial by trial once the run is going."""
    if config.user_simulator_config is not None:
        return
    from agentflow_eval.files.errors import EvalFileError, Problem

    where = f"config {config_path}" if config_path else "the config (none was given)"
    problems = [
        Problem(
            message=f"a simulated-user scenario needs user_simulator_config in {where}, "
            'e.g. "user_simulator_config": {"model": "openai/gpt-4o-mini"}',
            field="conversation_scenario",
            case_id=case.eval_id,
        )
        for case in eval_set.eval_cases
        if case.conversation_scenario is not None
    ]
    if problems:
        raise EvalFileError.from_problems(source, problems)


# -------------------------------------------------------------------------- run folders


@dataclass(frozen=True)
class RunPaths:
    """Where one run's files live."""

    run_dir: Path

    @property
    def trials(self) -> Path:
        return self.run_dir / "trials.jsonl"

    @property
    def judged(self) -> Path:
        return self.run_dir / "judged.jsonl"

    @property
    def results(self) -> Path:
        return self.run_dir / "results.json"

    @property
    def meta(self) -> Path:
        return self.run_dir / "run.json"

    @classmethod
    def new(cls, output_root: Path, eval_set_id: str, run_id: str, started: datetime) -> RunPaths:
        stamp = started.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        return cls(output_root / safe_id(eval_set_id) / f"{stamp}-{run_id}")


def new_run_id() -> str:
    return secrets.token_hex(4)


@dataclass
class RunMeta:
    """What the results say about the run itself."""

    run_id: str
    agent: str
    started_at: datetime
    runs_per_case: int
    agent_model: str | None = None
    judge_model: str | None = None
    simulated: bool = False
    count_infrastructure_errors: bool = False
    """Whether trials the provider failed count against the pass rate (by default they are
    reported apart and left out)."""
    notes: list[str] = field(default_factory=list)
    agent_version: str | None = None
    git_sha: str | None = None
    labels: dict[str, str] = field(default_factory=dict)

    def label_models(self, agent_model: str | None, config: EvalConfig) -> None:
        """Record the agent's and the judges' models, and whether either is the offline
        demo model (then every report says the results are simulated)."""
        from agentflow_eval.demo.names import is_demo_model

        self.agent_model = agent_model
        self.judge_model = judge_model_of(config)
        self.simulated = is_demo_model(agent_model) or is_demo_model(self.judge_model)


def judge_model_of(config: EvalConfig) -> str | None:
    """The judge model of a run, if any criterion uses an LLM judge: the criteria's own
    model when they agree on one, else the run-wide default."""
    from agentflow_eval.criteria.registry import known_llm_criteria

    judged = [name for name in config.criteria if name in known_llm_criteria()]
    if not judged:
        return None
    own = {config.criteria[name].judge_model for name in judged} - {None}
    return own.pop() if len(own) == 1 else config.judge.model


# ---------------------------------------------------------------------------------- plan


@dataclass
class RunPlan:
    """Everything the stages need, decided once at the start of a run."""

    eval_set: EvalSet
    config: EvalConfig
    paths: RunPaths
    meta: RunMeta
    settings: RunSettings
    warnings: list[str] = field(default_factory=list)
    resumed: bool = False

    @property
    def runs(self) -> int:
        return self.settings.runs

    @property
    def trial_settings(self) -> TrialSettings:
        return TrialSettings(
            timeout_s=self.settings.trial_timeout_s,
            workroot=self.settings.workroot,
            keep_workdirs=self.settings.keep_workdirs,
        )

    @property
    def total_trials(self) -> int:
        return len(self.eval_set.eval_cases) * self.settings.runs


def plan_run(
    inputs: RunInputs,
    options: RunOptions,
    *,
    agent: AgentUnderTest,
    output_dir: str | Path = defaults.OUTPUT_DIR,
    resume: str | Path | None = None,
    params: EvaluateParams | None = None,
) -> RunPlan:
    """Decide the run's settings and create its folder (or reopen ``resume``'s).

    A resumed run keeps the number of runs per case it started with. ``params``, when
    the run was started from them, are written to the folder's ``run.json`` so that the
    folder is its own resume point.
    """
    settings = resolve_settings(options, inputs.config)
    subset_note = None
    if options.cases or options.limit is not None:
        from agentflow_eval.run.selection import describe_selection, select_cases

        total = len(inputs.eval_set.eval_cases)
        inputs = replace(
            inputs, eval_set=select_cases(inputs.eval_set, options.cases, options.limit)
        )
        if len(inputs.eval_set.eval_cases) < total:
            subset_note = describe_selection(inputs.eval_set, total, options.cases, options.limit)
    if resume is not None:
        paths = RunPaths(Path(resume).resolve())
        meta = _read_meta(paths, settings.runs)
        settings = replace(settings, runs=meta.runs_per_case)
    else:
        started = datetime.now(UTC)
        run_id = new_run_id()
        paths = RunPaths.new(
            Path(output_dir).resolve(), inputs.eval_set.eval_set_id, run_id, started
        )
        paths.run_dir.mkdir(parents=True, exist_ok=True)
        meta = RunMeta(
            run_id=run_id, agent=agent.name, started_at=started, runs_per_case=settings.runs
        )
    meta.agent = agent.name
    meta.label_models(getattr(agent, "model", None), inputs.config)
    if subset_note:
        meta.notes.append(subset_note)
    _write_meta(paths, meta, params)
    return RunPlan(
        eval_set=inputs.eval_set,
        config=inputs.config,
        paths=paths,
        meta=meta,
        settings=settings,
        warnings=list(inputs.warnings),
        resumed=resume is not None,
    )


def _write_meta(paths: RunPaths, meta: RunMeta, params: EvaluateParams | None) -> None:
    document: dict[str, object] = {
        "run_id": meta.run_id,
        "started_at": meta.started_at.isoformat(),
        "runs_per_case": meta.runs_per_case,
        "agent": meta.agent,
    }
    if params is not None:
        # the folder is its own resume point (params_from_run_dir), so ``resume`` is left
        # out: run.json says how the run was started, whoever picked it up later
        document["params"] = params.model_dump(mode="json", exclude={"resume"})
    elif paths.meta.exists():  # a resume from objects keeps the parameters recorded first
        earlier = json.loads(paths.meta.read_text(encoding="utf-8")).get("params")
        if earlier is not None:
            document["params"] = earlier
    paths.meta.write_text(json.dumps(document, indent=2), encoding="utf-8")


def _read_meta(paths: RunPaths, runs: int) -> RunMeta:
    if not paths.meta.exists():
        raise FileNotFoundError(
            f"{paths.run_dir}: not a run folder to resume (no run.json); pass the folder an "
            "earlier run printed as 'results in ...'"
        )
    document = json.loads(paths.meta.read_text(encoding="utf-8"))
    return RunMeta(
        run_id=document["run_id"],
        agent=document.get("agent", ""),
        started_at=datetime.fromisoformat(document["started_at"]),
        runs_per_case=int(document.get("runs_per_case", runs)),
    )


def params_from_run_dir(run_dir: str | Path) -> EvaluateParams:
    """The parameters a run was started with, read back from its ``run.json``."""
    path = Path(run_dir) / "run.json"
    if not path.exists():
        raise FileNotFoundError(f"{run_dir}: no run.json; this is not a run folder")
    document = json.loads(path.read_text(encoding="utf-8"))
    if "params" not in document:
        raise ValueError(
            f"{path}: this run was started from Python, not from parameters; resume it "
            "from Python with the same agent and eval set"
        )
    params = EvaluateParams.model_validate(document["params"])
    return params.model_copy(update={"resume": str(Path(run_dir).resolve())})
