"""Agents cannot take the run down, and their output is theirs — through the installed
``agentflow-eval`` command, each run a subprocess:

- a chatty agent (its prints, a child's output to the inherited stdout) leaves
  ``--json`` valid JSON, and what it printed is in its trial's record, bounded;
- an agent's subprocesses end with its trial (a later trial sees none of them), and none
  survives the run, re-parented grandchildren and ``os.system`` ones included;
- an agent calling ``os._exit`` fails its own trial, named by case and trial number; the
  run finishes and its folder resumes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.e2e import test_faults_cli
from tests.e2e.test_faults_cli import ANSWER, project, results

run_cli = test_faults_cli.run_cli  # the fixture: the CLI on the session's Prefect server

pytestmark = pytest.mark.e2e

MARK = "600.4242"
"""The seconds our agents' ``sleep``s sleep: names them among the machine's processes."""
SYSTEM_MARK = "600.4343"
"""The same, for the ``sleep`` started through ``os.system``."""

AGENTS = f"""
import os, subprocess, sys, time

def chatty(message: str) -> str:
    for i in range(4000):
        print(f"line {{i}} of a chatty agent that prints more than anyone wants to read")
    print("to stderr as well", file=sys.stderr)
    subprocess.run(["echo", "a child printing to the inherited stdout"], check=True)
    return "{ANSWER}"

def spawner(message: str) -> str:
    if "spawn" in message:
        for _ in range(20):
            subprocess.Popen(["sleep", "{MARK}"])
        subprocess.Popen(["sh", "-c", "sleep {MARK} &"])  # re-parented when sh exits
        os.system("sleep {SYSTEM_MARK} &")
        time.sleep(60)  # past the trial's timeout
    print(f"live sleeps: {{len(live('{MARK}'))}}")
    return "{ANSWER}"

def live(mark):
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                command = open(f"/proc/{{pid}}/cmdline", "rb").read()
            except OSError:
                continue
            if mark.encode() in command.split(b"\\0"):
                found.append(pid)
    return found

def exits(message: str) -> str:
    if "exit" in message:
        os._exit(9)
    return "{ANSWER}"
"""


def agents(tmp_path: Path, cases: list[tuple[str, str]]) -> Path:
    evalset = project(tmp_path, cases)
    (tmp_path / "io_agents.py").write_text(AGENTS, encoding="utf-8")
    return evalset


def live_sleeps(mark: str) -> list[int]:
    """The live (not zombie) processes whose command line has ``mark`` as an argument."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if mark.encode() in command.split(b"\0"):
            found.append(int(proc.name))
    return found


def trials(tmp_path: Path) -> dict[str, dict]:
    (path,) = (tmp_path / "out").glob("*/*/trials.jsonl")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {f"{r['case_id']}#{r['trial_index']}": r for r in records}


def test_a_chatty_agent_leaves_json_output_valid_and_its_prints_in_its_trial(
    tmp_path: Path, run_cli
) -> None:
    evalset = agents(tmp_path, [("talk", "?")])
    done = run_cli("io_agents.py:chatty", str(evalset), "--runs", "2", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)  # nothing but the summary on stdout
    assert summary["totals"]["passed"] == 2
    assert "chatty agent" not in done.stdout + done.stderr
    assert "a child printing" not in done.stdout + done.stderr
    for trial in trials(tmp_path).values():
        output = trial["agent_output"]
        assert output["stdout"].startswith("line 0 of a chatty agent")
        assert output["stdout"].endswith(" bytes more")  # ~300 kB printed, 16 KiB kept
        assert output["stderr"] == "to stderr as well\n"
    assert "a child printing" not in json.dumps(trials(tmp_path))  # cut by the limit
    assert results(tmp_path)["trials"][0]["trial"]["agent_output"]["stderr"]


def test_a_childs_output_is_its_trials(tmp_path: Path, run_cli) -> None:
    evalset = agents(tmp_path, [("talk", "?")])
    (tmp_path / "quiet_child.py").write_text(
        "import subprocess\n"
        "def agent(message: str) -> str:\n"
        "    subprocess.run(['echo', 'a child printing'], check=True)\n"
        f"    return {ANSWER!r}\n",
        encoding="utf-8",
    )
    done = run_cli("quiet_child.py:agent", str(evalset), "--runs", "1", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    json.loads(done.stdout)
    assert trials(tmp_path)["talk#0"]["agent_output"]["stdout"] == "a child printing\n"


def test_an_agents_subprocesses_end_with_its_trial_and_none_outlives_the_run(
    tmp_path: Path, run_cli
) -> None:
    assert not live_sleeps(MARK) and not live_sleeps(SYSTEM_MARK), "left by an earlier run"
    evalset = agents(tmp_path, [("spawn", "please spawn"), ("after", "?")])
    done = run_cli(
        "io_agents.py:spawner", str(evalset), "--runs", "1", "--timeout", "3",
        "--max-concurrency", "1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    recorded = trials(tmp_path)
    assert recorded["spawn#0"]["error"]["kind"] == "timeout"
    # the next trial ran after the first ended: its 21 sleeps were gone by then
    assert recorded["after#0"]["agent_output"]["stdout"] == "live sleeps: 0\n"
    assert live_sleeps(MARK) == []
    assert live_sleeps(SYSTEM_MARK) == []  # os.system's: ended with the trial stage


def test_os_exit_from_an_agent_fails_its_trial_by_name_and_the_run_resumes(
    tmp_path: Path, run_cli
) -> None:
    evalset = agents(tmp_path, [("stay", "?"), ("bye", "please exit")])
    done = run_cli("io_agents.py:exits", str(evalset), "--runs", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    for index in (0, 1):
        error = trials(tmp_path)[f"bye#{index}"]["error"]
        assert error["type"] == "AgentExited"
        assert f"os._exit(9) during trial {index + 1} of case 'bye'" in error["message"]
        assert f"os._exit(9) during trial {index + 1} of case 'bye'" in done.stdout
    totals = results(tmp_path)["totals"]
    assert (totals["passed"], totals["errored"]) == (2, 2)
    (run_dir,) = (tmp_path / "out").glob("*/*/")
    resumed = run_cli("--resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert os.path.getsize(run_dir / "trials.jsonl") > 0
