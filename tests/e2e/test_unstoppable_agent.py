"""An async agent that blocks the event loop and swallows every interruption (a bare
``except BaseException`` around a blocking call, in a loop) holds the only thread the run
has. The CLI ends anyway, within the trial timeout plus its grace: one line naming the
trial and the resume command, exit 3; resumed, the run goes on without that trial (one
resume per such trial), and finishes with those trials errored and the others passed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli_subprocess import command_in
from tests.support.prefect_server import PrefectServer

pytestmark = pytest.mark.e2e

AGENT = """
import asyncio, time

async def swallows(message: str) -> str:
    if "hang" in message:
        while True:
            try:
                time.sleep(0.2)  # blocks the event loop
            except BaseException:  # and ignores being interrupted
                pass
    await asyncio.sleep(0.01)
    return "the answer is 42"
"""


def test_an_agent_that_will_not_stop_ends_the_run_resumably(
    tmp_path: Path, shared_prefect: PrefectServer
) -> None:
    (tmp_path / "swallow_agents.py").write_text(AGENT)
    evalset = tmp_path / "swallow.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "swallow",
                "eval_cases": [
                    {
                        "eval_id": case_id,
                        "conversation": [{"user_content": text}],
                        "expectations": [{"final_contains": "42"}],
                    }
                    for case_id, text in [("hang", "please hang"), ("ok", "?")]
                ],
            }
        )
    )
    run = command_in(tmp_path, shared_prefect.api_url, timeout_s=240)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run("run", *args)

    stopped = cli("swallow_agents.py:swallows", str(evalset), "--runs", "2", "--timeout", "3")
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    (line,) = [ln for ln in stopped.stderr.splitlines() if "ignored every interruption" in ln]
    assert "in trial 1 of case 'hang'" in line
    run_dir = line.rsplit("--resume ", 1)[1]

    # each trial of the agent holds its process the same way: one resume each
    again = cli("--resume", run_dir)
    assert again.returncode == 3, again.stdout + again.stderr
    assert "in trial 2 of case 'hang'" in again.stderr
    resumed = cli("--resume", run_dir)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    results = json.loads((Path(run_dir) / "results.json").read_text())
    by_case = {case["case_id"]: case for case in results["cases"]}
    assert by_case["ok"]["passed"] == 2
    assert by_case["hang"]["errored"] == 2
