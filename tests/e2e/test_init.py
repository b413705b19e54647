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


def _command(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


def test_init_then_run_and_pytest_pass_offline(
    tmp_path: Path, shared_prefect: PrefectServer
) -> None:
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_API_URL": shared_prefect.api_url,
    }
    init = [str(BIN / "agentflow-eval"), "init", "project"]
    made = _command(init, tmp_path, env)
    assert made.returncode == 0, made.stderr
    project = tmp_path / "project"
    assert "next: cd project && agentflow-eval run agent.py:agent" in made.stdout

    run = [str(BIN / "agentflow-eval"), "run", "agent.py:agent", "evals/starter.evalset.json"]
    ran = _command(run, project, env)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "agentflow-eval: starter · 3 runs each" in ran.stdout  # the config beside it
    assert "3 cases: " in ran.stdout and "not evaluated" not in ran.stdout
    (run_dir,) = (project / "eval-results" / "starter").iterdir()
    assert (run_dir / "report.html").is_file()

    tested = _command(
        [sys.executable, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider"], project, env
    )
    assert tested.returncode == 0, tested.stdout[-3000:]
    assert "1 passed" in tested.stdout

    before = (project / "agent.py").read_text(encoding="utf-8")
    again = _command(init, tmp_path, env)
    assert again.returncode == 2
    assert len(again.stderr.strip().splitlines()) == 1
    assert "project/agent.py: already exists" in again.stderr
    assert (project / "agent.py").read_text(encoding="utf-8") == before
