"""Settings that apply to every :class:`~agentflow_eval.evaluator.AgentEvaluator` run of
a test session, and who is told when a run finishes.

The pytest plugin (:mod:`agentflow_eval.pytest_plugin`) sets them from its command-line
options (``--agentflow-runs``, ``--agentflow-max-concurrency``,
``--agentflow-trial-timeout-s``, ``--agentflow-judge-model``,
``--agentflow-output-dir``: each a run-request field's flag behind ``agentflow-``) for the
length of the session, and listens for finished runs to list their reports. Anything
else that drives ``AgentEvaluator`` in bulk (a notebook, a script) may use them the same
way::

    with session_settings(SessionSettings(runs=1, output_dir="smoke")):
        await AgentEvaluator.evaluate_file(...)

A setting given here wins over the test's own arguments and the config file: it is the
choice of whoever started the session, made for all its evaluations at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported by the pytest plugin of every session: the standard library only
    from agentflow_eval.models.results import RunResult

__all__ = [
    "FinishedRun",
    "SessionSettings",
    "current_settings",
    "on_finished_run",
    "session_settings",
]


class SessionSettings:
    """Run-request fields set for every evaluator run, by the fields' own names
    (``SessionSettings(runs=1, output_dir="smoke")``; ``None`` leaves one to the run)."""

    __slots__ = ("values",)

    def __init__(self, **values: Any) -> None:
        self.values: Mapping[str, Any] = {k: v for k, v in values.items() if v is not None}

    def over(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """``settings`` with this session's values over them."""
        return {**settings, **self.values}

    def __repr__(self) -> str:
        return f"SessionSettings({', '.join(f'{k}={v!r}' for k, v in self.values.items())})"


@dataclass(frozen=True)
class FinishedRun:
    """A run an evaluator finished: its results and its folder."""

    run: RunResult
    run_dir: Path

    @property
    def report(self) -> Path:
        return self.run_dir / "report.html"


_settings = SessionSettings()
_listeners: list[Callable[[FinishedRun], None]] = []


def current_settings() -> SessionSettings:
    return _settings


@contextlib.contextmanager
def session_settings(settings: SessionSettings) -> Iterator[SessionSettings]:
    """Apply ``settings`` to every evaluator run inside the block."""
    global _settings
    previous, _settings = _settings, settings
    try:
        yield settings
    finally:
        _settings = previous


@contextlib.contextmanager
def on_finished_run(listener: Callable[[FinishedRun], None]) -> Iterator[None]:
    """Call ``listener`` with each run an evaluator finishes inside the block."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)


def announce(finished: FinishedRun) -> None:
    """Tell the listeners about a finished run (called by the evaluator)."""
    for listener in list(_listeners):
        listener(finished)
