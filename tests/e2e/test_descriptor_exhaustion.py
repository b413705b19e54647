"""An agent that leaks file descriptors until the process has none left (a soft and hard
limit of 400 here): the run stops with one line saying so and the infrastructure exit
code (3), no traceback — with Prefect and without — and ``--resume`` (a fresh process,
the leaked descriptors gone with the old one) finishes it."""

from __future__ import annotations

import json
import resource
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_faults_cli import AGENTFLOW_EVAL, ANSWER, env_for
from tests.support.prefect_server import PrefectServer

pytestmark = pytest.mark.e2e

LIMIT = 400

AGENTS = f"""
HELD = []


def leaky(message: str) -> str:
    for _ in range(60):
        HELD.append(open(__file__, encoding="utf-8"))  # never closed
    return "{ANSWER}"


def greedy(message: str) -> str:
    try:
        while True:
            HELD.append(open(__file__, encoding="utf-8"))  # every one it can get
    except OSError:
        pass
    return "{ANSWER}"
"""


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


@pytest.mark.parametrize(
    ("agent", "prefect"),
    [("leaky", True), ("leaky", False), ("greedy", False)],
    ids=["leaky-prefect", "leaky-no-prefect", "greedy-no-prefect"],
)
def test_running_out_of_descriptors_stops_in_one_line_and_resumes(
    tmp_path: Path, shared_prefect: PrefectServer, agent: str, prefect: bool
) -> None:
    (tmp_path / "leaking_agents.py").write_text(AGENTS, encoding="utf-8")
    evalset = tmp_path / "leak.evalset.json"
    cases = [
        {
            "eval_id": f"c{index}",
            "conversation": [{"user_content": "?"}],
            "expectations": [{"final_contains": "42"}],
        }
        for index in range(6)
    ]
    evalset.write_text(json.dumps({"eval_set_id": "leak", "eval_cases": cases}), "utf-8")
    flags = [] if prefect else ["--no-prefect"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [AGENTFLOW_EVAL, "run", *args, *flags],
            cwd=tmp_path,
            env=env_for(tmp_path, shared_prefect.api_url),
            capture_output=True,
            text=True,
            timeout=240,
            preexec_fn=limited,
        )

    stopped = run(
        f"leaking_agents.py:{agent}", str(evalset), "--runs", "2", "--max-concurrency", "2",
        "--output", str(tmp_path / "out"),
    )  # fmt: skip
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    assert "Traceback" not in stopped.stderr, stopped.stderr
    (line,) = [ln for ln in stopped.stderr.splitlines() if "file descriptors" in ln]
    assert line.startswith(
        f"agentflow-eval: error: this process ran out of file descriptors (too many open "
        f"files, limit {LIMIT}); the run stopped"
    )
    (run_dir,) = (tmp_path / "out" / "leak").iterdir()
    assert f"--resume {run_dir.relative_to(tmp_path)}" in line

    resumed = run("--resume", str(run_dir), "--quiet")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    assert results["totals"]["trials"] == 12
