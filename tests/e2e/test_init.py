"""``agentflow-eval init`` in a fresh folder, then ``run`` there, offline, as a new user
would: the starter project evaluates (exit 0, every case judged), its pytest test passes
through the plugin, and a second ``init`` refuses with one line, exit 2, nothing changed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.prefect_server import PrefectServer

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent


def test_init_then_run_and_pytest_pass_offline(
    tmp_path: Path, shared_prefect: PrefectServer
) -> None:
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_API_URL": shared_prefect.api_url,
    }
    made = subprocess.run(
        [str(BIN / "agentflow-eval"), "init", "project"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    project = tmp_path / "project"
    assert "next: cd project && agentflow-eval run agent.py:agent" in made.stdout

    ran = subprocess.run(
        [str(BIN / "agentflow-eval"), "run", "agent.py:agent", "evals/starter.evalset.json"],
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "agentflow-eval: starter · 3 runs each" in ran.stdout  # the config beside it
    assert "3 cases: " in ran.stdout and "not evaluated" not in ran.stdout
    (run_dir,) = (project / "eval-results" / "starter").iterdir()
    assert (run_dir / "report.html").is_file()

    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=600,
    )
    assert tested.returncode == 0, tested.stdout[-3000:]
    assert "1 passed" in tested.stdout

    before = (project / "agent.py").read_text(encoding="utf-8")
    again = subprocess.run(
        [str(BIN / "agentflow-eval"), "init", "project"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert again.returncode == 2
    assert len(again.stderr.strip().splitlines()) == 1
    assert "project/agent.py: already exists" in again.stderr
    assert (project / "agent.py").read_text(encoding="utf-8") == before
