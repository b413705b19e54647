"""The CLI run in this process, as its tests drive it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.cli_in_process import CliResult, run_cli

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., CliResult]:
    """``cli(*args) -> CliResult``: ``agentflow-eval ARGS`` in this process, from the
    repository's folder."""
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    # what the command sets for its process, undone after the test (as is the folder
    # it puts on sys.path for the agent's imports)
    monkeypatch.setenv("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "WARNING")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(ROOT)

    def run(*args: str) -> CliResult:
        return run_cli(capsys, *args)

    return run
