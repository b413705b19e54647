"""What a trial's environment is, as the agent and the end-state checks see it.

An environment function (named in an eval set or config, see
:mod:`agentflow_eval.run.trial_environment`) sets up a fresh world for each trial — a
copy of a seed database, a folder of seeded files, a service on a free port — and
yields an :class:`Environment` saying where it is. The agent gets that object (an agent
function's ``environment`` parameter, a tool's, ``SessionContext.environment``, the
variables in every subprocess the trial starts); the case's end-state checks read the
world through it before it is torn down.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentflow_eval.models.evalset import EvalCase

__all__ = ["Environment", "TrialInfo"]


@dataclass(frozen=True)
class Environment:
    """One trial's environment: where its files and database are, the variables the
    agent needs, anything else it is handed, and how to record the world's state."""

    folder: Path | None = None
    """The environment's own folder: a relative path of an end-state check (a file, the
    database) is read there (without it: in the trial's working directory)."""
    database: Path | None = None
    """The SQLite database an end-state ``sql`` check queries when it names none."""
    variables: Mapping[str, str] = field(default_factory=dict)
    """Environment variables the agent needs (a URL, a connection string): set in every
    subprocess the trial starts, and readable here by an agent in this process (the
    process's own ``os.environ`` is shared by every trial, so it is never changed)."""
    resource: Any = None
    """Anything else the agent is handed: a client, a server's handle."""
    capture: Callable[[], Any] | None = None
    """Records the world's state when the agent is done, before teardown (a function,
    sync or async, returning a JSON value): kept in the trial as ``end_state.captured``,
    where end-state ``json_path`` checks read it, then and in a later ``rejudge``."""

    def __post_init__(self) -> None:
        for name, value in self.variables.items():
            if not isinstance(name, str) or not isinstance(value, str):
                raise TypeError(
                    f"Environment.variables must map names to strings; {name!r} is "
                    f"{type(value).__name__}"
                )
        if self.capture is not None and not callable(self.capture):
            raise TypeError(
                f"Environment.capture must be a function, got {type(self.capture).__name__}"
            )

    def path(self, relative: str | Path, workdir: Path) -> Path:
        """``relative`` as an end-state check reads it: in :attr:`folder`, else in the
        trial's ``workdir`` (an absolute path as it is)."""
        return (self.folder if self.folder is not None else workdir) / relative


@dataclass(frozen=True)
class TrialInfo:
    """What an environment function may ask for (a parameter named ``trial``): the
    trial it sets up for, and the trial's own working directory (created on first
    read of :attr:`workdir`; removed after the trial unless the run keeps it)."""

    case: EvalCase
    trial_index: int
    workdir_path: Path

    @property
    def case_id(self) -> str:
        return self.case.eval_id

    @property
    def workdir(self) -> Path:
        """The trial's own directory (private to this user), created on first use."""
        self.workdir_path.mkdir(mode=0o700, parents=True, exist_ok=True)
        return self.workdir_path
