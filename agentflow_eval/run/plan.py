"""Turning :class:`EvaluateParams` into a concrete run: loaded files, effective settings
(params over config over defaults), and the run folder with its ``run.json``, which is
what lets ``--resume`` pick a crashed run up where it stopped."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.models.results import RunResult, Trial
from agentflow_eval.run.stages import (
    DEFAULT_RUNS,
    RunMeta,
    RunPaths,
    StageCounts,
    new_run_id,
    run_trials,
)
from agentflow_eval.run.trial import TrialSettings

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_TRIAL_TIMEOUT_S",
    "RunOutcome",
    "RunPlan",
    "params_from_run_dir",
    "plan_run",
    "run_planned_trials",
]

DEFAULT_MAX_CONCURRENCY = 16
DEFAULT_TRIAL_TIMEOUT_S = 120.0


@dataclass
class RunPlan:
    """Everything the stages need, decided once at the start of a run."""

    params: EvaluateParams
    eval_set: EvalSet
    config: EvalConfig
    paths: RunPaths
    meta: RunMeta
    runs: int
    max_concurrency: int
    trial_settings: TrialSettings
    warnings: list[str] = field(default_factory=list)
    resumed: bool = False


class RunOutcome:
    """What the evaluate flow returns: the results, where they are, where they went.

    A plain class on purpose, not a dataclass or a pydantic model: Prefect walks those
    in a flow's return value looking for futures, field by field, all the way down the
    run's cases (0.5 s per 200 cases here, measured); an object of its own type it
    returns untouched.
    """

    __slots__ = ("notes", "published", "report_url", "run", "run_dir")

    def __init__(
        self,
        run: RunResult,
        run_dir: Path,
        report_url: str | None = None,
        published: list[str] | None = None,
        notes: list[str] | None = None,
    ) -> None:
        self.run = run
        self.run_dir = run_dir
        self.report_url = report_url
        self.published: list[str] = list(published or [])
        self.notes: list[str] = list(notes or [])

    def __repr__(self) -> str:
        return (
            f"RunOutcome(run_dir={str(self.run_dir)!r}, pass_rate={self.run.totals.pass_rate:.3f}"
            f", report_url={self.report_url!r})"
        )


def load_inputs(params: EvaluateParams) -> tuple[EvalSet, EvalConfig, list[str]]:
    """Load and validate the eval set and config named by ``params``.

    Raises :class:`agentflow_eval.files.loading.EvalFileError` naming file, case and field.
    """
    from agentflow_eval.files.loading import (
        find_config_for,
        load_config,
        load_evalset,
        unjudged_warnings,
    )

    loaded = load_evalset(params.evalset)
    config_path = params.config or find_config_for(params.evalset)
    config = load_config(config_path) if config_path else EvalConfig.default()
    if params.judge_model:
        config.judge.model = params.judge_model
    check_criteria(config, config_path)
    warnings = [*loaded.warnings, *config.load_warnings]
    return loaded.eval_set, config, warnings + unjudged_warnings(loaded.eval_set, config)


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
                config_path or "(default config)", str(exc), field=f"criteria.{name}"
            ) from None


def plan_run(params: EvaluateParams, *, agent_name: str, agent_model: str | None) -> RunPlan:
    """Load the inputs and create (or reopen, with ``params.resume``) the run folder."""
    eval_set, config, warnings = load_inputs(params)
    runs = params.runs or config.runs or DEFAULT_RUNS
    resumed = False
    if params.resume:
        paths = RunPaths(Path(params.resume).resolve())
        meta = _read_meta(paths, eval_set, runs)
        runs = meta.runs_per_case
        resumed = True
    else:
        started = datetime.now(UTC)
        run_id = new_run_id()
        paths = RunPaths.new(
            Path(params.output_dir).resolve(), eval_set.eval_set_id, run_id, started
        )
        paths.run_dir.mkdir(parents=True, exist_ok=True)
        meta = RunMeta(run_id=run_id, agent=agent_name, started_at=started, runs_per_case=runs)
    meta.agent = agent_name
    meta.label_models(agent_model, config)
    _write_meta(paths, params, meta)
    return RunPlan(
        params=params,
        eval_set=eval_set,
        config=config,
        paths=paths,
        meta=meta,
        runs=runs,
        max_concurrency=params.max_concurrency or config.max_concurrency or DEFAULT_MAX_CONCURRENCY,
        trial_settings=TrialSettings(
            timeout_s=params.trial_timeout_s or config.trial_timeout_s or DEFAULT_TRIAL_TIMEOUT_S
        ),
        warnings=warnings,
        resumed=resumed,
    )


async def run_planned_trials(
    plan: RunPlan,
    agent: AgentUnderTest,
    *,
    on_trial: Callable[[Trial], None] | None = None,
    rate_limiter: RateLimiter | None = None,
) -> StageCounts:
    """The trial stage of ``plan``: :func:`~agentflow_eval.run.stages.run_trials` with the
    plan's eval set, trials file, runs, concurrency, timeouts and turn sources."""
    from agentflow_eval.run.simulated_user import turn_source_factory

    return await run_trials(
        agent,
        plan.eval_set,
        plan.paths.trials,
        runs=plan.runs,
        max_concurrency=plan.max_concurrency,
        settings=plan.trial_settings,
        turn_source_for=turn_source_factory(plan.config),
        on_trial=on_trial,
        rate_limiter=rate_limiter,
    )


def _write_meta(paths: RunPaths, params: EvaluateParams, meta: RunMeta) -> None:
    document = {
        "run_id": meta.run_id,
        "started_at": meta.started_at.isoformat(),
        "runs_per_case": meta.runs_per_case,
        "agent": meta.agent,
        # the folder is its own resume point (params_from_run_dir), so ``resume`` is left
        # out: run.json says how the run was started, whoever picked it up later
        "params": params.model_dump(mode="json", exclude={"resume"}),
    }
    paths.meta.write_text(json.dumps(document, indent=2), encoding="utf-8")


def _read_meta(paths: RunPaths, eval_set: EvalSet, runs: int) -> RunMeta:
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
    params = EvaluateParams.model_validate(document["params"])
    return params.model_copy(update={"resume": str(Path(run_dir).resolve())})
