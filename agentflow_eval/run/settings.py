"""What a caller asks of a run (:class:`RunOptions`) and the settings it runs with once
every one is decided (:class:`RunSettings`): the caller's, else the config file's, else
:mod:`agentflow_eval.models.defaults`, the same way for every front door."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentflow_eval.errors import InputError
from agentflow_eval.models import defaults
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.request import RunRequest
from agentflow_eval.run.trial import TrialSettings

__all__ = ["RunOptions", "RunSettings", "check_trial_count", "resolve_settings"]


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
    shard: tuple[int, int] | None = None
    """``(index, count)``: only shard ``index`` of ``count`` of the chosen cases (a
    sharded run's part, see :func:`~agentflow_eval.run.selection.shard_of`)."""
    track: str | None = None
    """The history the run joins (``None``: :data:`~agentflow_eval.models.defaults.TRACK`)."""
    min_pass_rate: float | None = None
    """The run's pass-rate gate (``None`` or 0: none)."""
    min_case_pass_rate: float | None = None
    """Every case's pass-rate gate (``None`` or 0: none)."""

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
    def of(cls, request: RunRequest) -> RunOptions:
        """What ``request`` asks of the run's planning."""
        return cls(
            runs=request.runs,
            max_concurrency=request.max_concurrency,
            trial_timeout_s=request.trial_timeout_s,
            workroot=Path(request.workroot) if request.workroot else None,
            keep_workdirs=request.keep_workdirs,
            count_infrastructure_errors=request.count_infrastructure_errors,
            cases=tuple(request.cases or ()),
            limit=request.limit,
            shard=(request.shard.index, request.shard.count) if request.shard else None,
            track=request.track,
            min_pass_rate=request.min_pass_rate,
            min_case_pass_rate=request.min_case_pass_rate,
        )


@dataclass(frozen=True)
class RunSettings:
    """The settings a run goes with, every one decided."""

    runs: int
    max_concurrency: int
    trial_timeout_s: float
    workroot: Path | None = None
    keep_workdirs: bool = False
    case_pass_bar: float = 1.0
    """The pass rate a case's junit.xml testcase must reach: the run's
    ``min_case_pass_rate``, else its ``min_pass_rate``, else every trial."""

    @property
    def trial(self) -> TrialSettings:
        """How each trial runs."""
        return TrialSettings(
            timeout_s=self.trial_timeout_s, workroot=self.workroot, keep_workdirs=self.keep_workdirs
        )


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
        case_pass_bar=options.min_case_pass_rate or options.min_pass_rate or 1.0,
    )


def check_trial_count(runs: int, cases: int) -> None:
    """Refuse, in one line and before anything starts, a run of more than
    :data:`~agentflow_eval.models.defaults.MAX_TRIALS` trials."""
    trials = runs * cases
    if trials > defaults.MAX_TRIALS:
        raise InputError(
            f"runs {runs:,} × {cases:,} case(s) is {trials:,} trials, more than one run may "
            f"hold ({defaults.MAX_TRIALS:,}): lower runs, or split the eval set"
        )
