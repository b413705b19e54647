"""A real CLI run at --max-concurrency 1024 under a soft file-descriptor limit of 1024:
every one of its 1,024 trials holds a file open at once, which the limit as it was could
not hold. The run raises the soft limit (one warning line saying so) and finishes with
every trial passed and no traceback."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.prefect_server import PrefectServer, prefect_env

pytestmark = pytest.mark.e2e

AGENTFLOW_EVAL = str(Path(sys.executable).parent / "agentflow-eval")
ANSWER = "the answer is 42"
AGENT = f"""
import asyncio

async def agent(message):
    with open(__file__, encoding="utf-8"):  # a descriptor held while the trial runs
        await asyncio.sleep(1.0)
    return {ANSWER!r}
"""


def soft_limit_1024() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))


def test_a_run_at_1024_in_flight_under_a_soft_limit_of_1024_finishes(
    tmp_path: Path, shared_prefect: PrefectServer
) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 8192:
        pytest.skip(f"the hard limit here ({hard}) cannot hold 1024 trials in flight")
    (tmp_path / "holding_agent.py").write_text(AGENT, encoding="utf-8")
    evalset = tmp_path / "many.evalset.json"
    cases = [
        {
            "eval_id": f"case-{index:03d}",
            "conversation": [{"user_content": "what is it?", "expected_final_response": ANSWER}],
        }
        for index in range(256)
    ]
    evalset.write_text(json.dumps({"eval_set_id": "many", "eval_cases": cases}), "utf-8")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"response_match_score": 0.8}}), "utf-8")
    home = tmp_path / "prefect"
    home.mkdir()
    done = subprocess.run(
        [
            AGENTFLOW_EVAL,
            "run",
            "holding_agent.py:agent",
            str(evalset),
            "--config",
            str(config),
            "--runs",
            "4",
            "--max-concurrency",
            "1024",
            "--quiet",
            "--output",
            str(tmp_path / "out"),
        ],
        cwd=tmp_path,
        env=prefect_env(home, shared_prefect.api_url),
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=soft_limit_1024,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Traceback" not in done.stdout + done.stderr
    assert "Too many open files" not in done.stdout + done.stderr
    warnings = [line for line in done.stderr.splitlines() if "file-descriptor limit" in line]
    assert (
        len(warnings) == 1 and "raised the soft file-descriptor limit from 1024 to" in (warnings[0])
    )
    (run_dir,) = (tmp_path / "out").glob("*/*")
    totals = json.loads((run_dir / "results.json").read_text())["totals"]
    assert totals["trials"] == 1024 and totals["passed"] == 1024, totals
