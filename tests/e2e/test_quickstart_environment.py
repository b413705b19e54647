"""The two quickstart commands share one .venv and never reinstall each other's: the
example asks for the package alone, the tests for their extras, and scripts/_venv.sh
installs only what is missing, keeping what an earlier command installed.

The virtualenv here is a stand-in whose ``python`` and ``uv`` record how they were called,
so the test sees every install the script would make without making one."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]

RECORDER = """#!/bin/sh
echo "$(basename "$0") $*" >> "$(dirname "$0")/../calls.log"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "_venv.sh", root / "scripts" / "_venv.sh")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for tool in ("python", "uv"):
        (bin_dir / tool).write_text(RECORDER)
        (bin_dir / tool).chmod(0o755)
    return root


def _source(project: Path, extras: str | None) -> list[str]:
    """Source the script as a quickstart command does; the installs it made."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTFLOW_")}
    if extras is not None:
        env["AGENTFLOW_EXTRAS"] = extras
    log = project / ".venv" / "calls.log"
    log.unlink(missing_ok=True)
    subprocess.run(["bash", "-c", "source scripts/_venv.sh"], cwd=project, env=env, check=True)
    calls = log.read_text().splitlines() if log.exists() else []
    return [call for call in calls if call.startswith("uv pip install")]


def test_the_example_then_the_tests_then_the_example_installs_twice(project: Path) -> None:
    example, tests = "", "test,frameworks"
    [first] = _source(project, example)
    assert first.endswith("-e .")  # the package alone
    [second] = _source(project, tests)
    assert second.endswith("-e .[frameworks,test]")
    assert _source(project, example) == []  # the tests' environment has what it needs
    assert _source(project, tests) == []
    assert _source(project, "test") == []


def test_a_changed_pyproject_reinstalls_with_the_extras_already_there(project: Path) -> None:
    _source(project, "test")
    with (project / "pyproject.toml").open("a") as pyproject:
        pyproject.write("\n# a pin moved\n")
    [install] = _source(project, "")
    assert install.endswith("-e .[test]")
