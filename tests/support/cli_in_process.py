"""``agentflow-eval ARGS`` in the test's process: exit code and what it printed."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agentflow_eval.cli import main

__all__ = ["CliResult", "run_cli"]


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> CliResult:
    """Run the command with ``args``; argparse's usage errors are exit codes too."""
    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return CliResult(code, out, err)
