"""The ``agentflow-eval`` command as a person meets it, in a new process: live progress
bars on a terminal (a pseudo-terminal here), plain lines through a pipe, the run summary
as JSON, errored trials re-run in a new folder, one scorecard with --verbose, no
telemetry noise, and Ctrl-C that stops cleanly with the command that finishes the run.

The interrupted run is a user's first: no Prefect API configured (the CLI launches
Prefect's temporary server and stops it on Ctrl-C) and Prefect's defaults (telemetry on).
The other runs use the session's Prefect server (tests/e2e/conftest.py)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.prefect_db import seeded_home
from tests.support.prefect_server import PrefectServer

pytestmark = pytest.mark.e2e

EVALSET = "weather.evalset.json"
COMMAND = [str(Path(sys.executable).parent / "agentflow-eval"), "run"]
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
COLOUR = re.compile(r"\x1b\[[0-9;]*3[0-9;]*m")

AGENT = """
import os
import time


def agent(message: str, recorder, session) -> str:
    time.sleep(float(os.environ.get("AGENT_DELAY_S", "0")))
    if session.trial_index % 2 and not os.environ.get("AGENT_FIXED"):
        raise ConnectionError("the weather service is down")
    with recorder.tool("get_weather", {"location": "New York"}) as call:
        call.result = {"condition": "sunny", "temperature": 72}
    return "The weather in New York is currently sunny with a temperature of 72°F."
"""


def _case(eval_id: str) -> dict:
    return {
        "eval_id": eval_id,
        "conversation": [
            {
                "user_content": "What's the weather in New York?",
                "expected_tool_trajectory": [
                    {"name": "get_weather", "args": {"location": "New York"}}
                ],
                "expected_final_response": "The weather in New York is currently sunny with a "
                "temperature of 72°F.",
            }
        ],
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    evalset = {"eval_set_id": "weather", "eval_cases": [_case("new_york"), _case("nyc_again")]}
    (tmp_path / EVALSET).write_text(json.dumps(evalset), encoding="utf-8")
    return tmp_path


def environment(project: Path, api_url: str | None, **extra: str) -> dict[str, str]:
    """A user's environment: Prefect's API at ``api_url`` or (None) none configured."""
    env = {**os.environ, "PREFECT_HOME": str(project / "prefect"), **extra}
    for name in ("PREFECT_API_URL", "PREFECT_SERVER_ANALYTICS_ENABLED", "NO_COLOR"):
        env.pop(name, None)  # the defaults a user has: telemetry on, colour on
    if api_url:
        env["PREFECT_API_URL"] = api_url
    env.update(extra)
    return env


def run_in_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run the command with a pseudo-terminal as stdin, stdout and stderr."""
    main, child = pty.openpty()
    process = subprocess.Popen(
        args, stdin=child, stdout=child, stderr=child, cwd=cwd, env=env, close_fds=True
    )
    os.close(child)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.5)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    os.close(main)
    return process.wait(timeout=60), b"".join(chunks).decode("utf-8", errors="replace")


def test_a_terminal_shows_live_bars_then_the_scorecard(
    project: Path, shared_prefect: PrefectServer
) -> None:
    env = environment(
        project,
        shared_prefect.api_url,
        NO_COLOR="1",
        AGENT_DELAY_S="0.2",
        COLUMNS="120",
        TERM="xterm",
    )
    code, output = run_in_terminal(
        [*COMMAND, "agent.py:agent", EVALSET, "--runs", "6", "--max-concurrency", "2"],
        project,
        env,
    )
    assert code == 0, output[-3000:]
    text = ESCAPES.sub("", output)
    assert re.search(r"trials +━+╸? +\d+/12 \d errored [\d.]+/s ETA \d+s", text)  # mid-run
    assert re.search(r"trials +━+ 12/12 6 errored", text)
    assert re.search(r"judging +━+ 12/12 6 passed · 0 failed · 6 errored", text)
    assert "\x1b[2K" in output  # redrawn in place: a live display, not lines
    assert not COLOUR.search(output)  # NO_COLOR
    scorecard = text[text.index("agentflow-eval: weather · 6 runs each") :]
    assert "overall: 6/12" in scorecard
    assert "errored ×3 (trials 2, 4, 6): exception: ConnectionError: the weather service" in (
        scorecard
    )
    assert "━" not in scorecard  # the bars ended before the scorecard


def test_a_pipe_gets_plain_lines_json_and_a_rerun_of_errored_trials(
    project: Path, shared_prefect: PrefectServer
) -> None:
    env = environment(project, shared_prefect.api_url)
    first = subprocess.run(
        [*COMMAND, "agent.py:agent", EVALSET, "--runs", "4", "--json"],
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=300,
    )
    assert first.returncode == 0, first.stderr[-3000:]
    summary = json.loads(first.stdout)  # stdout holds the JSON and nothing else
    assert (summary["totals"]["passed"], summary["totals"]["errored"]) == (4, 4)
    assert [case["verdict"] for case in summary["cases"]] == ["flaky", "flaky"]
    assert "trials 8/8 · 4 errored" in first.stderr.splitlines()
    assert "judged 8/8 · 4 passed · 0 failed · 4 errored" in first.stderr.splitlines()
    assert "\x1b" not in first.stderr
    assert "telemetry" not in first.stderr.lower()  # (and on the temporary server: below)
    assert "Traceback" not in first.stderr
    source = Path(summary["run_dir"])
    source_trials = (source / "trials.jsonl").read_bytes()

    again = subprocess.run(
        [*COMMAND, "--rerun-errored", str(source), "--verbose"],
        capture_output=True,
        text=True,
        cwd=project,
        env={**env, "AGENT_FIXED": "1"},
        timeout=300,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"running 4 errored trial(s) of {source} again in eval-results/weather/" in (
        again.stderr
    )
    assert "overall: 8/8" in again.stdout
    everything = again.stdout + again.stderr
    assert everything.count("overall: ") == 1  # --verbose: the scorecard once, not in a log
    assert "Finished in state Completed" in again.stderr  # --verbose shows Prefect's log
    new_dir = project / re.search(r"results in (\S+)", again.stdout).group(1)
    assert new_dir.parent == source.parent and new_dir != source
    assert (source / "trials.jsonl").read_bytes() == source_trials  # the source is kept
    assert len((new_dir / "trials.jsonl").read_text().splitlines()) == 8


def _interrupted_once(project: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str, str]:
    """Start a 40-trial run, press Ctrl-C once its trials are running; the ended process,
    its stdout and its whole stderr."""
    process = subprocess.Popen(
        [*COMMAND, "agent.py:agent", EVALSET, "--runs", "20", "--max-concurrency", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=project,
        env=env,
    )
    seen = []
    assert process.stderr is not None
    for line in process.stderr:  # wait until trials are running
        seen.append(line)
        if line.startswith("trials "):
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    return process, out, "".join(seen) + err


def test_ctrl_c_stops_cleanly_and_says_how_to_finish(
    project: Path, shared_prefect: PrefectServer
) -> None:
    seeded_home(project / "prefect")  # the temporary server's database, migrated already
    env = environment(project, None, AGENT_DELAY_S="0.5", AGENT_FIXED="1")
    process, out, err = _interrupted_once(project, env)
    assert process.returncode == 130, err[-3000:]
    assert "Traceback" not in err and "Crash detected" not in err
    assert "telemetry" not in err.lower()  # the temporary server sends none
    match = re.search(r"interrupted; (\d+) finished trial\(s\) are kept in (\S+)", err)
    assert match, err
    shown = match.group(2)  # relative to the current directory, as typed
    assert shown.startswith("eval-results/weather/")
    assert f"finish the run with: agentflow-eval run --resume {shown}" in err
    run_dir = project / shown
    assert out == ""
    kept = len((run_dir / "trials.jsonl").read_text().splitlines())
    assert 0 < kept < 40

    resumed = subprocess.run(
        [*COMMAND, "--resume", shown, "--quiet"],
        capture_output=True,
        text=True,
        cwd=project,
        env={**env, "AGENT_DELAY_S": "0", "PREFECT_API_URL": shared_prefect.api_url},
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert resumed.stdout.splitlines() == [
        "overall: 40/40  (100%, 95% CI 91%–100%)",
        f"results in {shown}",
    ]
    assert resumed.stderr == ""  # --quiet: no progress


def test_ctrl_c_without_prefect_stops_cleanly_and_the_resume_finishes(project: Path) -> None:
    env = environment(project, None, AGENT_DELAY_S="0.5", AGENT_FIXED="1")
    env["AGENTFLOW_EVAL_NO_PREFECT"] = "1"
    process, out, err = _interrupted_once(project, env)
    assert process.returncode == 130, err[-3000:]
    assert "Traceback" not in err and out == ""
    match = re.search(r"finish the run with: agentflow-eval run --resume (\S+)", err)
    assert match, err
    assert not (project / "prefect").exists()  # Prefect never ran: no home, no database
    resumed = subprocess.run(
        [*COMMAND, "--resume", match.group(1), "--quiet"],
        capture_output=True,
        text=True,
        cwd=project,
        env={**env, "AGENT_DELAY_S": "0"},
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert resumed.stdout.splitlines()[0] == "overall: 40/40  (100%, 95% CI 91%–100%)"
