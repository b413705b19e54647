"""A run killed with SIGKILL midway and resumed with ``agentflow-eval run --resume``: no
finished trial is lost or run again, and the results equal an uninterrupted run's. The
runs use the session's Prefect server (tests/e2e/conftest.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.support.prefect_server import PrefectServer

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CASES = 12
RUNS = 4
TRIALS = CASES * RUNS

AGENT = '''
"""A slow, deterministic agent that logs every invocation: (pid, case, trial)."""
import asyncio
import json
import os

from agentflow_eval.agents.base import current_session


async def agent(message: str) -> str:
    session = current_session()
    case_index = int(session.case_id.removeprefix("case"))
    await asyncio.sleep(0.05 + 0.05 * ((case_index + session.trial_index) % 4))
    with open(os.environ["RESUME_TEST_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps([os.getpid(), session.case_id, session.trial_index]) + "\\n")
    right = (case_index + session.trial_index) % 3 != 0
    return "the answer is 42" if right else "the answer is 41"
'''


def write_inputs(folder: Path) -> tuple[Path, Path, Path]:
    agent = folder / "slow_agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    evalset = folder / "resume.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "resume_after_kill",
                "eval_cases": [
                    {
                        "eval_id": f"case{i}",
                        "conversation": [
                            {
                                "user_content": "What is the answer?",
                                "expected_final_response": "the answer is 42",
                            }
                        ],
                    }
                    for i in range(CASES)
                ],
            }
        ),
        encoding="utf-8",
    )
    config = folder / "config.json"
    config.write_text(
        json.dumps({"criteria": {"response_match_score": {"threshold": 0.8}}, "runs": RUNS}),
        encoding="utf-8",
    )
    return agent, evalset, config


def cli_env(folder: Path, name: str, api_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PREFECT_API_URL=api_url,
        PREFECT_HOME=str(folder / f"prefect-{name}"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        RESUME_TEST_LOG=str(folder / f"{name}.log"),
    )
    return env


def cli(*args: str) -> list[str]:
    return [str(Path(sys.executable).parent / "agentflow-eval"), "run", *args]


def complete_keys(path: Path) -> list[tuple[str, int]]:
    """(case, trial) of every complete line (a torn last line is not a finished record)."""
    keys = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.endswith("\n") and line.strip():
                record = json.loads(line)
                trial = record.get("trial", record)
                keys.append((trial["case_id"], int(trial["trial_index"])))
    return keys


def invocations(log: Path) -> list[tuple[int, str, int]]:
    return [tuple(json.loads(line)) for line in log.read_text(encoding="utf-8").splitlines()]


def pass_counts(results: Path) -> dict[str, int]:
    document = json.loads(results.read_text(encoding="utf-8"))
    return {case["case_id"]: case["passed"] for case in document["cases"]}


def kill_midway(command: list[str], env: dict[str, str], output: Path, timeout_s: float) -> None:
    """Start ``command`` in its own process group; SIGKILL the group once the run's
    trials.jsonl under ``output`` holds some, but not all, finished trials."""
    log = output.with_suffix(".out")  # the command's output (not the agent's .log)
    with log.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=sink, stderr=sink, start_new_session=True
        )
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(
                    "the run ended before it could be killed midway:\n"
                    + log.read_text(encoding="utf-8")[-3000:]
                )
            found = list(output.glob("*/*/trials.jsonl"))
            if found and len(complete_keys(found[0])) >= TRIALS // 4:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
                return
            time.sleep(0.01)
        raise AssertionError(f"no trials written within {timeout_s:.0f} s")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def test_a_killed_run_resumes_without_losing_or_repeating_a_trial(
    tmp_path: Path, shared_prefect: PrefectServer
) -> None:
    agent, evalset, config = write_inputs(tmp_path)
    spec = f"{agent}:agent"

    # an uninterrupted run, for the results to match
    baseline = subprocess.run(
        cli(spec, str(evalset), "--config", str(config), "--output", str(tmp_path / "baseline")),
        cwd=ROOT,
        env=cli_env(tmp_path, "baseline", shared_prefect.api_url),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert baseline.returncode == 0, baseline.stderr[-3000:]
    (baseline_results,) = (tmp_path / "baseline").glob("*/*/results.json")

    # the same run, killed midway
    out = tmp_path / "killed"
    env = cli_env(tmp_path, "killed", shared_prefect.api_url)
    command = cli(spec, str(evalset), "--config", str(config), "--output", str(out))
    kill_midway([*command, "--max-concurrency", "4"], env, out, timeout_s=240)
    (run_dir,) = out.glob("*/*")
    finished_before = set(complete_keys(run_dir / "trials.jsonl"))
    assert 0 < len(finished_before) < TRIALS
    assert not (run_dir / "results.json").exists()
    first_pids = {pid for pid, _, _ in invocations(Path(env["RESUME_TEST_LOG"]))}
    assert len(first_pids) == 1

    # resumed
    resumed = subprocess.run(
        cli("--resume", str(run_dir)),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"results in {run_dir}" in resumed.stdout

    every_key = {(f"case{i}", t) for i in range(CASES) for t in range(RUNS)}
    for name in ("trials.jsonl", "judged.jsonl"):
        counts = Counter(complete_keys(run_dir / name))
        assert set(counts) == every_key, name
        assert set(counts.values()) == {1}, f"{name} holds a trial twice"

    calls = invocations(Path(env["RESUME_TEST_LOG"]))
    resumed_pids = {pid for pid, _, _ in calls} - first_pids
    assert len(resumed_pids) == 1
    rerun = {(case, trial) for pid, case, trial in calls if pid in resumed_pids}
    # nothing finished before the kill ran again; everything else ran after it
    assert not rerun & finished_before
    assert rerun == every_key - finished_before
    # a trial in flight at the kill ran twice at most; every other one exactly once
    per_key = Counter((case, trial) for _, case, trial in calls)
    assert all(per_key[key] == 1 for key in finished_before)
    assert max(per_key.values()) <= 2

    document = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    assert document["totals"]["trials"] == TRIALS
    assert len(document["trials"]) == TRIALS
    assert pass_counts(run_dir / "results.json") == pass_counts(baseline_results)
    assert sum(pass_counts(baseline_results).values()) == sum(
        1 for i in range(CASES) for t in range(RUNS) if (i + t) % 3 != 0
    )
