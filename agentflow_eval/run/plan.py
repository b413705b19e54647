"""A run, decided once before any trial: its inputs, its settings and its folder.

Every front door goes through here — the CLI and the evaluate flow (from
:class:`~agentflow_eval.models.params.EvaluateParams`), ``AgentEvaluator`` and
:func:`agentflow_eval.run.pipeline.evaluate` (from objects) — so configuration means the
same wherever a run starts:

    inputs = load_inputs(evalset_path, config_path)      # or RunInputs(eval_set, config)
    plan = plan_run(inputs, RunOptions(runs=3), agent=agent, output_dir="eval-results")

A setting comes from the caller's :class:`RunOptions`, else the config file, else
:mod:`agentflow_eval.models.defaults`. The plan is then handed to each stage
(:mod:`~agentflow_eval.run.trials`, :mod:`~agentflow_eval.run.judging`, the report
writer), which take everything else they need as arguments.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.errors import InputError
from agentflow_eval.files.naming import distinct_safe_id
from agentflow_eval.models import defaults
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.run.folder_lock import RunFolderBusy, RunFolderLock
from agentflow_eval.run.trial import TrialSettings

__all__ = [
    "ResumeMismatch",
    "RunFolderBusy",
    "RunInputs",
    "RunMeta",
    "RunOptions",
    "RunPaths",
    "RunPlan",
    "RunSettings",
    "check_criteria",
    "check_resumable",
    "check_resume",
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
    count_infrastructure_errors: bool = False
    """Count trials the provider failed (after retries) against the pass rate; by default
    they are reported apart and left out of it."""
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
            count_infrastructure_errors=params.count_infrastructure_errors,
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
    """``options``, else ``config``, else :mod:`agentflow_eval.models.defaults`."""
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
    criteria against the eval set (:func:`check_criteria`)."""

    eval_set: EvalSet
    config: EvalConfig
    warnings: list[str] = field(default_factory=list)
    config_path: Path | None = None
    evalset_path: Path | None = None

    @classmethod
    def of(cls, eval_set: EvalSet, config: EvalConfig | None = None) -> RunInputs:
        """Inputs from objects; no config means ADK's default criteria."""
        chosen = config if config is not None else EvalConfig.default()
        check_criteria(chosen, None, eval_set)
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
    check_criteria(run_config, config_path, loaded.eval_set, Path(evalset))
    check_scenarios(loaded.eval_set, run_config, evalset, config_path)
    warnings = [
        *loaded.warnings,
        *run_config.load_warnings,
        *unjudged_warnings(loaded.eval_set, run_config),
    ]
    return RunInputs(loaded.eval_set, run_config, warnings, config_path, Path(evalset))


RUBRIC_CRITERIA = frozenset(
    {"rubric_based_final_response_quality_v1", "rubric_based_tool_use_quality_v1"}
)
"""Built-in criteria that judge rubrics, and have nothing to judge without one."""


def check_criteria(
    config: EvalConfig,
    config_path: str | Path | None,
    eval_set: EvalSet | None = None,
    evalset_path: str | Path | None = None,
) -> None:
    """Check, before any trial runs, that the run can judge what it runs.

    The config's criteria are built once: an unknown name or a custom check that does not
    load is an error naming the file and the criterion, not a traceback after the whole
    trial phase. Given the eval set, nothing may pass without being checked: an eval set
    without cases, a rubric criterion with no rubric anywhere (in its config, the cases
    or their turns), and a case that no criterion judges are errors too."""
    from agentflow_eval.criteria.registry import build_criteria, build_criterion
    from agentflow_eval.files.errors import EvalFileError

    config_file = config_path or "(config)"
    for name, options in config.criteria.items():
        try:
            build_criterion(name, options, config)
        except ValueError as exc:
            raise EvalFileError(config_file, str(exc), field=f"criteria.{name}") from None
    _check_judge_key(config, config_file)
    if eval_set is None:
        return
    evalset_file = evalset_path or "(eval set)"
    if not eval_set.eval_cases:
        raise EvalFileError(
            evalset_file,
            f"eval set {eval_set.eval_set_id!r} has no cases: there is nothing to evaluate",
            field="eval_cases",
        )
    cases_have_rubrics = any(_has_rubrics(case) for case in eval_set.eval_cases)
    for name, options in config.criteria.items():
        rubric_less = not options.rubrics and not cases_have_rubrics
        if name in RUBRIC_CRITERIA and not options.function and rubric_less:
            raise EvalFileError(
                config_file,
                f"criterion {name!r} has no rubrics to judge, so it could never pass or "
                "fail: give 'rubrics' in this criterion, in the cases or in their turns, "
                "or remove it",
                field=f"criteria.{name}",
            )
    for case in eval_set.eval_cases:
        if not build_criteria(config, case):
            raise EvalFileError(
                evalset_file,
                "no criterion judges this case, so it would pass having checked nothing: "
                f"give the config criteria ({config_file}) or the case expectations",
                case_id=case.eval_id,
            )


def _check_judge_key(config: EvalConfig, config_file: str | Path) -> None:
    """A judge key variable that is not set would fail every judge call of the run, each
    one "not evaluated": say so before anything runs."""
    import os

    from agentflow_eval.criteria.registry import known_llm_criteria
    from agentflow_eval.files.errors import EvalFileError

    name = config.judge.api_key_env
    judged = any(
        criterion in known_llm_criteria() and not options.function
        for criterion, options in config.criteria.items()
    )
    if judged and name and not os.environ.get(name, "").strip():
        raise EvalFileError(
            config_file,
            f"the judge's API key variable {name!r} is not set (or empty) in the environment",
            field="judge.api_key_env",
        )


def _has_rubrics(case: Any) -> bool:
    if getattr(case, "rubrics", None):
        return True
    return any(getattr(turn, "rubrics", None) for turn in getattr(case, "conversation", []))


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
        return cls(output_root / distinct_safe_id(eval_set_id) / f"{stamp}-{run_id}")


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
    lock: RunFolderLock | None = field(default=None, repr=False, compare=False)
    """The run folder's lock, held from planning until :meth:`release` (or the process's
    end): no other process writes this folder meanwhile."""

    def release(self) -> None:
        """Let go of the run folder (idempotent): call it when the run is over."""
        if self.lock is not None:
            self.lock.release()

    def __getstate__(self) -> dict[str, Any]:
        # a plan may be copied or pickled (task parameters); the lock stays with the
        # process that took it
        state = dict(self.__dict__)
        state["lock"] = None
        return state

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
    """Decide the run's settings and create its folder (or reopen ``resume``'s), taking
    the folder's lock (:class:`RunFolderBusy` when another process holds it).

    A resumed run must be the run the folder holds: the same eval set (id and cases), the
    same judging config and the same runs per case (:func:`check_resume`); anything else
    is refused with :class:`ResumeMismatch`, the folder left as it was. ``params``, when
    the run was started from them, are written to the folder's ``run.json`` so that the
    folder is its own resume point.
    """
    settings = resolve_settings(options, inputs.config)
    subset_note = None
    total = len(inputs.eval_set.eval_cases)
    inputs = _selected(inputs, options)
    if len(inputs.eval_set.eval_cases) < total:
        from agentflow_eval.run.selection import describe_selection

        subset_note = describe_selection(inputs.eval_set, total, options.cases, options.limit)
    if resume is not None:
        paths = RunPaths(Path(resume).resolve())
        document = read_run_json(paths.run_dir)
        lock = RunFolderLock.acquire(paths.run_dir)
        try:
            check_resume(paths.run_dir, inputs, options, document=document)
            meta = _meta_from(document, paths.meta, settings.runs)
        except BaseException:
            lock.release()
            raise
        settings = replace(settings, runs=meta.runs_per_case)
    else:
        started = datetime.now(UTC)
        run_id = new_run_id()
        paths = RunPaths.new(
            Path(output_dir).resolve(), inputs.eval_set.eval_set_id, run_id, started
        )
        paths.run_dir.mkdir(parents=True, exist_ok=True)
        lock = RunFolderLock.acquire(paths.run_dir)
        meta = RunMeta(
            run_id=run_id, agent=agent.name, started_at=started, runs_per_case=settings.runs
        )
    meta.agent = agent.name
    meta.count_infrastructure_errors = options.count_infrastructure_errors
    meta.label_models(getattr(agent, "model", None), inputs.config)
    if subset_note:
        meta.notes.append(subset_note)
    try:
        _write_meta(paths, meta, params, inputs)
    except BaseException:
        lock.release()
        raise
    return RunPlan(
        eval_set=inputs.eval_set,
        config=inputs.config,
        paths=paths,
        meta=meta,
        settings=settings,
        warnings=list(inputs.warnings),
        resumed=resume is not None,
        lock=lock,
    )


# ------------------------------------------------------------------------------ resuming


class ResumeMismatch(InputError):
    """``--resume`` with inputs that are not the run folder's."""


_OPERATIONAL_CONFIG = {
    "max_concurrency": True,
    "trial_timeout_s": True,
    "rate_limits": True,
    "runs": True,
    "judge": {
        "max_concurrency": True,
        "timeout_s": True,
        "max_retries": True,
        "retry_base_delay_s": True,
        "retry_max_delay_s": True,
        "cache": True,
        "refresh_cache": True,
        "cache_expiration_s": True,
    },
}
"""Config settings that change how a run goes, not what it measures: a resume may change
them (runs per case are checked on their own)."""


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def fingerprint(inputs: RunInputs) -> dict[str, Any]:
    """What a resume must find unchanged: the eval set (its id, each case's content) and
    the config's judging sections (criteria, judge model and options, simulated user)."""
    cases = {
        case.eval_id: _digest(case.model_dump(mode="json")) for case in inputs.eval_set.eval_cases
    }
    judging = inputs.config.model_dump(mode="json", exclude=_OPERATIONAL_CONFIG)
    return {
        "eval_set_id": inputs.eval_set.eval_set_id,
        "cases": cases,
        "config": {section: _digest(value) for section, value in sorted(judging.items())},
    }


def check_resume(
    run_dir: str | Path,
    inputs: RunInputs,
    options: RunOptions,
    *,
    document: Mapping[str, Any] | None = None,
) -> None:
    """Refuse (:class:`ResumeMismatch`, one line) to resume ``run_dir`` with an eval set,
    config or runs per case other than those it was started with. A run.json written
    before fingerprints were recorded is checked for runs per case only."""
    folder = Path(run_dir)
    record = document if document is not None else read_run_json(folder)
    runs = record.get("runs_per_case")
    asked = options.runs or inputs.config.runs
    if isinstance(runs, int) and asked is not None and asked != runs:
        raise ResumeMismatch(
            f"cannot resume {folder}: it runs each case {runs} times, this resume asks for "
            f"{asked} (--runs or the config's runs); resume without changing them, or start "
            "a new run"
        )
    recorded = record.get("fingerprint")
    if not isinstance(recorded, Mapping):
        return
    now = fingerprint(inputs)
    problems: list[str] = []
    if recorded.get("eval_set_id") != now["eval_set_id"]:
        problems.append(
            f"its eval set is {recorded.get('eval_set_id')!r}, not {now['eval_set_id']!r}"
        )
    else:
        problems.extend(_case_changes(recorded.get("cases") or {}, now["cases"]))
    old_config = recorded.get("config") or {}
    changed = sorted(
        section
        for section in set(old_config) | set(now["config"])
        if old_config.get(section) != now["config"].get(section)
    )
    if changed:
        problems.append(f"its config differs in {', '.join(changed)}")
    if problems:
        raise ResumeMismatch(
            f"cannot resume {folder} with these inputs: {'; '.join(problems)}; resume with "
            "the eval set and config it was started with, or start a new run"
        )


def check_resumable(run_dir: str | Path, inputs: RunInputs, options: RunOptions) -> None:
    """What :func:`plan_run` checks before resuming ``run_dir``, without keeping the
    folder: its run.json, that these inputs are its run's (:class:`ResumeMismatch`), and
    that no other process holds it (:class:`RunFolderBusy`). For a front door that wants
    to refuse before it starts anything; :func:`plan_run` checks again as it takes the
    folder."""
    document = read_run_json(run_dir)
    check_resume(run_dir, _selected(inputs, options), options, document=document)
    RunFolderLock.acquire(Path(run_dir)).release()


def _selected(inputs: RunInputs, options: RunOptions) -> RunInputs:
    """``inputs`` with only the cases ``options`` choose (``--case``, ``--limit``)."""
    if not options.cases and options.limit is None:
        return inputs
    from agentflow_eval.run.selection import select_cases

    return replace(inputs, eval_set=select_cases(inputs.eval_set, options.cases, options.limit))


def _case_changes(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    added = [case for case in now if case not in before]
    removed = [case for case in before if case not in now]
    changed = [case for case in now if case in before and before[case] != now[case]]
    return [
        f"{len(cases)} case{'s' if len(cases) != 1 else ''} {what} ({_some(cases)})"
        for what, cases in (("added", added), ("removed", removed), ("changed", changed))
        if cases
    ]


def _some(ids: list[str], limit: int = 3) -> str:
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def read_run_json(run_dir: str | Path) -> dict[str, Any]:
    """A run folder's ``run.json``; a missing, unreadable or malformed one is an error
    naming the file."""
    from agentflow_eval.files.errors import EvalFileError

    path = Path(run_dir) / "run.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"{run_dir}: not a run folder to resume (no run.json); pass the folder an "
            "earlier run printed as 'results in ...'"
        )
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise EvalFileError(path, "not UTF-8 text: the run folder's run.json is damaged") from None
    except json.JSONDecodeError as exc:
        raise EvalFileError(
            path,
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg} (the run "
            "folder's run.json is damaged)",
        ) from None
    except OSError as exc:
        raise EvalFileError(path, f"cannot be read: {exc.strerror or exc}") from None
    if not isinstance(document, dict):
        raise EvalFileError(path, "expected a JSON object (the run folder's run.json)")
    for key in ("run_id", "started_at"):
        if not isinstance(document.get(key), str):
            raise EvalFileError(path, f"has no {key!r} (the run folder's run.json)", field=key)
    try:
        datetime.fromisoformat(document["started_at"])
    except ValueError:
        raise EvalFileError(
            path, f"'started_at' is not a date: {document['started_at']!r}", field="started_at"
        ) from None
    return document


def _write_meta(
    paths: RunPaths, meta: RunMeta, params: EvaluateParams | None, inputs: RunInputs
) -> None:
    earlier = read_run_json(paths.run_dir) if paths.meta.exists() else {}
    document: dict[str, object] = {
        "run_id": meta.run_id,
        "started_at": meta.started_at.isoformat(),
        "runs_per_case": meta.runs_per_case,
        "agent": meta.agent,
        "count_infrastructure_errors": meta.count_infrastructure_errors,
        "fingerprint": earlier.get("fingerprint") or fingerprint(inputs),
    }
    if params is not None:
        # the folder is its own resume point (params_from_run_dir), so ``resume`` is left
        # out: run.json says how the run was started, whoever picked it up later
        document["params"] = params.model_dump(mode="json", exclude={"resume"})
    elif earlier.get("params") is not None:  # a resume from objects keeps the first ones
        document["params"] = earlier["params"]
    from agentflow_eval.files.atomic import write_text_atomically

    write_text_atomically(paths.meta, [json.dumps(document, indent=2)])


def _meta_from(document: Mapping[str, Any], path: Path, runs: int) -> RunMeta:
    from agentflow_eval.files.errors import EvalFileError

    try:
        runs_per_case = int(document.get("runs_per_case", runs))
    except (TypeError, ValueError):
        raise EvalFileError(
            path, "'runs_per_case' is not a number", field="runs_per_case"
        ) from None
    return RunMeta(
        run_id=document["run_id"],
        agent=str(document.get("agent", "")),
        started_at=datetime.fromisoformat(document["started_at"]),
        runs_per_case=runs_per_case,
    )


def params_from_run_dir(run_dir: str | Path) -> EvaluateParams:
    """The parameters a run was started with, read back from its ``run.json``."""
    from agentflow_eval.files.errors import EvalFileError

    document = read_run_json(run_dir)
    path = Path(run_dir) / "run.json"
    if "params" not in document:
        raise ValueError(
            f"{path}: this run was started from Python, not from parameters; resume it "
            "from Python with the same agent and eval set"
        )
    try:
        params = EvaluateParams.model_validate(document["params"])
    except ValueError as exc:
        first = str(exc).splitlines()
        raise EvalFileError(
            path, f"its 'params' are not valid: {first[1] if len(first) > 1 else exc}"
        ) from None
    return params.model_copy(update={"resume": str(Path(run_dir).resolve())})
