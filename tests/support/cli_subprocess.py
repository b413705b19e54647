"""``agentflow-eval`` as a user runs it: the installed command in a process of its own,
on a given Prefect server, from a project folder."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["AGENTFLOW_EVAL", "command_in"]

AGENTFLOW_EVAL = str(Path(sys.executable).parent / "agentflow-eval")
"""The command the tests' own environment installed."""


def command_in(
    project: Path, api_url: str, timeout_s: float = 300
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run(*args)``: ``agentflow-eval ARGS`` from ``project``, on the Prefect server at
    ``api_url``, its output captured. A command that does not end on its own within
    ``timeout_s`` fails the test there."""
    env = {
        **os.environ,
        "PREFECT_API_URL": api_url,
        "PREFECT_HOME": str(project / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [AGENTFLOW_EVAL, *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )

    return run
