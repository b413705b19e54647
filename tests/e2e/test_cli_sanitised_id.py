"""An eval set whose id is not a safe folder name (``team/weather eval``): the CLI's live
progress follows the run folder the run writes, and Ctrl-C says how many trials were kept
there and how to finish the run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentflow_eval.files.naming import distinct_safe_id
from tests.support.prefect_db import seeded_home

pytestmark = pytest.mark.e2e

EVAL_SET_ID = "team/weather eval"
COMMAND = [str(Path(sys.executable).parent / "agentflow-eval"), "run"]

AGENT = """
import time


def agent(message: str, recorder) -> str:
    time.sleep(0.3)
    with recorder.tool("get_weather", {"location": "Oslo"}) as call:
        call.result = {"condition": "snow"}
    return "Snow in Oslo."
"""


def test_progress_and_the_resume_line_follow_the_sanitised_folder(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    case = {
        "eval_id": "oslo",
        "conversation": [
            {
                "user_content": "Weather in Oslo?",
                "expected_tool_trajectory": [{"name": "get_weather", "args": {"location": "Oslo"}}],
            }
        ],
    }
    evalset = tmp_path / "weather.evalset.json"
    evalset.write_text(json.dumps({"eval_set_id": EVAL_SET_ID, "eval_cases": [case]}))
    env = {**os.environ, "PREFECT_HOME": str(seeded_home(tmp_path / "prefect"))}
    env.pop("PREFECT_API_URL", None)
    process = subprocess.Popen(
        [*COMMAND, "agent.py:agent", evalset.name, "--runs", "40", "--max-concurrency", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    seen = []
    assert process.stderr is not None
    for line in process.stderr:  # live progress: plain lines through a pipe
        seen.append(line)
        if re.match(r"trials [1-9]\d*/40", line):
            break
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=120)
    err = "".join(seen) + rest
    assert process.returncode == 130, err[-3000:]
    folder = f"eval-results/{distinct_safe_id(EVAL_SET_ID)}/"
    match = re.search(r"interrupted; (\d+) finished trial\(s\) are kept in (\S+)", err)
    assert match, err
    kept, shown = int(match.group(1)), match.group(2)
    assert kept > 0 and shown.startswith(folder), err
    assert f"finish the run with: agentflow-eval run --resume {shown}" in err
    assert len((tmp_path / shown / "trials.jsonl").read_text().splitlines()) == kept
