"""An async agent that swallows its cancellation (``except BaseException: pass`` around an
``await``) cannot hold a run: past its trial timeout and the cancellation grace, the
trial is recorded as timed out and the agent abandoned — never awaited forever, never
recorded as passed, even when it finishes later. The run ends on its own with its
results (with and without Prefect), at its deadline (``--timeout-minutes``), and at the
first Ctrl-C with the ``--resume`` line. Each run is the installed command in a process
of its own, which must end by itself."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentflow_eval.models.defaults import CANCEL_GRACE_S
from tests.e2e import test_faults_cli
from tests.e2e.test_faults_cli import AGENTFLOW_EVAL, ANSWER, env_for, project, results
from tests.support.prefect_server import PrefectServer

run_cli = test_faults_cli.run_cli  # the fixture: the CLI on the session's Prefect server

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]

TIMEOUT_S = 5
SLACK_S = 60.0
"""What a run may take beyond its agent's time: starting (Prefect's too), judging,
reporting, on a busy machine."""

AGENTS = f"""
import asyncio, pathlib


async def swallows(message: str) -> str:
    if "hang" in message:
        pathlib.Path("hanging").touch()
        while True:
            try:
                await asyncio.sleep(0.5)
            except BaseException:
                pass
    await asyncio.sleep(0.01)
    return "{ANSWER}"


async def swallows_once(message: str) -> str:
    if "hang" in message:
        try:
            await asyncio.sleep(600)
        except BaseException:
            pass
        await asyncio.sleep(3 * {CANCEL_GRACE_S})  # and answers, long after its timeout
    return "{ANSWER}"
"""

CASES = [("hang0", "please hang"), ("ok0", "?"), ("hang1", "please hang"), ("ok1", "?")]


def agents(tmp_path: Path, cases: list[tuple[str, str]] = CASES) -> Path:
    evalset = project(tmp_path, cases)
    (tmp_path / "swallow_agents.py").write_text(AGENTS, encoding="utf-8")
    return evalset


def trials(tmp_path: Path) -> list[dict]:
    (path,) = (tmp_path / "out").glob("*/*/trials.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def flags(prefect: bool) -> list[str]:
    return [] if prefect else ["--no-prefect"]


@pytest.mark.parametrize("prefect", [True, False], ids=["prefect", "no-prefect"])
def test_a_trial_that_swallows_cancellation_times_out_and_the_run_ends(
    tmp_path: Path, run_cli, prefect: bool
) -> None:
    evalset = agents(tmp_path)
    started = time.monotonic()
    done = run_cli(
        "swallow_agents.py:swallows", str(evalset), "--runs", "2",
        "--timeout", str(TIMEOUT_S), "--json", *flags(prefect),
    )  # fmt: skip
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    totals = results(tmp_path)["totals"]
    assert (totals["trials"], totals["passed"], totals["errored"]) == (8, 4, 4)
    assert json.loads(done.stdout)["totals"]["errored"] == 4
    hung = [t for t in trials(tmp_path) if t["case_id"].startswith("hang")]
    assert len(hung) == 4
    for trial in hung:
        error = trial["error"]
        assert error["kind"] == "timeout"
        assert f"did not finish within {TIMEOUT_S} s" in error["message"]
        assert "abandoned" in error["message"]
        assert TIMEOUT_S * 1000 <= trial["duration_ms"] <= (TIMEOUT_S + CANCEL_GRACE_S + 3) * 1000
    # the eight trials ran at once, each over within its timeout and grace
    assert took < TIMEOUT_S + CANCEL_GRACE_S + SLACK_S


def test_an_agent_that_swallows_once_and_answers_later_is_not_passed(
    tmp_path: Path, run_cli
) -> None:
    evalset = agents(tmp_path, [("hang", "please hang")])
    done = run_cli(
        "swallow_agents.py:swallows_once", str(evalset), "--runs", "1",
        "--timeout", str(TIMEOUT_S), "--no-prefect",
    )  # fmt: skip
    assert done.returncode == 4, done.stderr[-3000:]  # its one trial errored
    (trial,) = trials(tmp_path)
    assert trial["error"]["kind"] == "timeout"
    assert trial["duration_ms"] <= (TIMEOUT_S + CANCEL_GRACE_S + 3) * 1000
    assert results(tmp_path)["totals"]["passed"] == 0


@pytest.mark.parametrize("prefect", [True, False], ids=["prefect", "no-prefect"])
def test_the_run_deadline_holds_over_an_agent_that_swallows_cancellation(
    tmp_path: Path, run_cli, prefect: bool
) -> None:
    evalset = agents(tmp_path)
    started = time.monotonic()
    done = run_cli(
        "swallow_agents.py:swallows", str(evalset), "--runs", "1",
        "--timeout", "600", "--timeout-minutes", "0.25", *flags(prefect),
    )  # fmt: skip
    took = time.monotonic() - started
    assert done.returncode == 3, done.stdout + done.stderr[-3000:]
    assert "the run did not finish within 0.25 min (--timeout-minutes)" in done.stderr
    assert "--resume " in done.stderr
    assert "Traceback" not in done.stderr
    assert took < 15 + CANCEL_GRACE_S + SLACK_S


@pytest.mark.parametrize("prefect", [True, False], ids=["prefect", "no-prefect"])
def test_the_first_ctrl_c_stops_a_run_whose_agent_swallows_cancellation(
    tmp_path: Path, shared_prefect: PrefectServer, prefect: bool
) -> None:
    evalset = agents(tmp_path)
    process = subprocess.Popen(
        [
            AGENTFLOW_EVAL, "run", "swallow_agents.py:swallows", str(evalset), "--runs", "2",
            "--output", str(tmp_path / "out"), *flags(prefect),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env_for(tmp_path, shared_prefect.api_url),
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (tmp_path / "hanging").exists():
        assert process.poll() is None and time.monotonic() < deadline, "no trial started"
        time.sleep(0.1)
    time.sleep(1)  # the agent is inside its loop
    interrupted = time.monotonic()
    process.send_signal(signal.SIGINT)  # once
    try:
        _, err = process.communicate(timeout=CANCEL_GRACE_S + SLACK_S)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err[-3000:]
    assert time.monotonic() - interrupted < CANCEL_GRACE_S + SLACK_S
    assert "Traceback" not in err
    match = re.search(r"finish the run with: agentflow-eval run --resume (\S+)", err)
    assert match, err


SCRIPT = """
import asyncio, sys
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.pipeline.evaluate import evaluate
from tests.support.faults import answer_config, answer_evalset


async def swallows(message: str) -> str:
    while True:
        try:
            await asyncio.sleep(0.1)
        except BaseException:
            pass


run = asyncio.run(evaluate(PythonAgent(swallows), answer_evalset(2), answer_config(),
                           runs=1, trial_timeout_s=0.5, output_dir=sys.argv[1]))
print(run.totals.errored, flush=True)
"""


def test_a_python_program_that_abandoned_an_agent_exits(tmp_path: Path) -> None:
    # the interpreter frees what is left at its exit; a swallowing agent's coroutine,
    # freed, would run its loop again — with no event loop left, for ever
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=0.5 + CANCEL_GRACE_S + SLACK_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "2"
