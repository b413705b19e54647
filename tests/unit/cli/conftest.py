"""The CLI run in this process, as its tests drive it."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentflow_eval.cli import main

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``cli(*args) -> Result``: ``agentflow-eval ARGS`` in this process, from the
    repository's folder."""
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    # what the command sets for its process, undone after the test (as is the folder
    # it puts on sys.path for the agent's imports)
    monkeypatch.setenv("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "WARNING")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(ROOT)

    def run(*args: str) -> Result:
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run
