"""``agentflow-eval run --json`` prints the run summary on stdout and nothing else, however
the agent writes: straight to file descriptors 1 and 2 (as native code does), through a
child that inherits them (``os.system``), through ``subprocess`` — at import and in its
trials — with Prefect (the session's server) and without it. What went to descriptor 1
is on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e import test_faults_cli
from tests.e2e.test_faults_cli import ANSWER, project

run_cli = test_faults_cli.run_cli  # the fixture: the CLI on the session's Prefect server

pytestmark = pytest.mark.e2e

AGENT = f"""
import os, subprocess

os.write(1, b"fd 1 at import\\n")


def agent(message: str) -> str:
    os.write(1, b"fd 1 in a trial\\n")
    os.write(2, b"fd 2 in a trial\\n")
    subprocess.run(["echo", "a child of subprocess"], check=True)
    os.system("echo a child of os.system")
    return "{ANSWER}"
"""


@pytest.mark.parametrize("prefect", [True, False], ids=["prefect", "no-prefect"])
def test_json_is_all_stdout_holds_whatever_the_agent_writes_to_fd_1(
    tmp_path: Path, run_cli, prefect: bool
) -> None:
    evalset = project(tmp_path, [("talk", "?")])
    (tmp_path / "fd_agent.py").write_text(AGENT, encoding="utf-8")
    flags = [] if prefect else ["--no-prefect"]
    done = run_cli("fd_agent.py:agent", str(evalset), "--runs", "2", "--json", *flags)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)  # the summary, and nothing before or after it
    assert summary["totals"]["passed"] == 2
    for line in ("fd 1 at import", "fd 1 in a trial", "fd 2 in a trial", "a child of os.system"):
        assert line in done.stderr
    assert done.stderr.count("fd 1 in a trial") == 2
    (trials,) = (tmp_path / "out").glob("*/*/trials.jsonl")
    for record in map(json.loads, trials.read_text(encoding="utf-8").splitlines()):
        assert record["agent_output"]["stdout"] == "a child of subprocess\n"
