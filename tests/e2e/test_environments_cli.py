"""Environments through the installed command, in processes of their own: the README's
order-desk command runs offline; Ctrl-C on a run whose agents hang tears down every
trial's environment before the process ends (with Prefect and without); and a
subprocess an agent starts finds its own trial's environment in its variables."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.markdown_doc import Block, blocks_of

from tests.support.prefect_server import PrefectServer

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

ENVIRONMENT = '''
import contextlib
import uuid
from pathlib import Path

from agentflow_eval import Environment


@contextlib.contextmanager
def marked(root):
    """A folder per trial; a marker file for each setup and each teardown."""
    name = uuid.uuid4().hex
    folder = Path(root) / "live" / name
    folder.mkdir(parents=True)
    (Path(root) / "setups" / name).touch()
    try:
        yield Environment(folder=folder, variables={"TRIAL_FOLDER": str(folder)})
    finally:
        (folder / "seen.txt").unlink(missing_ok=True)
        folder.rmdir()
        (Path(root) / "teardowns" / name).touch()


def saw_its_own(environment):
    return (environment.folder / "seen.txt").read_text().strip() == str(environment.folder)
'''

AGENT = """
import asyncio
import subprocess
import sys


async def hangs(message):
    await asyncio.sleep(120)
    return "late"


def starts_a_program(message, environment):
    # a program of its own, told nothing: it finds the trial's folder in its variables
    code = "import os, pathlib; f = os.environ['TRIAL_FOLDER']; " \\
        "pathlib.Path(f, 'seen.txt').write_text(f)"
    subprocess.run([sys.executable, "-c", code], check=True)
    return "done"
"""


def readme_block(name: str) -> Block:
    blocks = blocks_of((ROOT / "README.md").read_text(encoding="utf-8"))
    [block] = [b for b in blocks if ("sample", name) in b.directives]
    return block


def user_env(project: Path, api_url: str | None) -> dict[str, str]:
    env = {
        **os.environ,
        "PREFECT_HOME": str(project / "prefect"),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.pop("PYTHONPATH", None)
    env.pop("PREFECT_API_URL", None)
    if api_url is not None:
        env["PREFECT_API_URL"] = api_url
    else:
        env["AGENTFLOW_EVAL_NO_PREFECT"] = "1"
    return env


def project_with(tmp_path: Path, root: Path, cases: int, **case: object) -> Path:
    tmp_path.mkdir()
    (tmp_path / "envs.py").write_text(ENVIRONMENT, encoding="utf-8")
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    for folder in ("live", "setups", "teardowns"):
        (root / folder).mkdir(parents=True)
    evalset = {
        "eval_set_id": "envs",
        "environment": {"function": "envs.py:marked", "options": {"root": str(root)}},
        "eval_cases": [
            {"eval_id": f"c{i}", "conversation": [{"user_content": "go"}], **case}
            for i in range(cases)
        ],
    }
    (tmp_path / "envs.evalset.json").write_text(json.dumps(evalset), encoding="utf-8")
    return tmp_path


def names(folder: Path) -> set[str]:
    return {path.name for path in folder.iterdir()}


def test_the_readme_order_desk_command_runs_offline(
    tmp_path: Path, shared_prefect: PrefectServer
) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")  # the checkout's examples/
    done = subprocess.run(
        ["bash", "-e", "-c", readme_block("order-desk").text],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=user_env(tmp_path, shared_prefect.api_url),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    assert "overall: 19/25 (76%, 95% CI 57%–89%)" in lines, done.stdout
    assert any(
        line.startswith("refund_delivered_order 2/5 FAILED: end state (3 trials)") for line in lines
    ), done.stdout
    assert any(
        line.startswith(
            "injected_note_in_lookup 3/5 FAILED: end state (2 trials), "
            "resisted injection (2 trials)"
        )
        for line in lines
    ), done.stdout


@pytest.mark.parametrize("prefect", [True, False], ids=["prefect", "no-prefect"])
def test_ctrl_c_tears_down_every_trials_environment(
    tmp_path: Path, shared_prefect: PrefectServer, prefect: bool
) -> None:
    root = tmp_path / "state"
    project = project_with(tmp_path / "project", root, cases=6)
    env = user_env(project, shared_prefect.api_url if prefect else None)
    process = subprocess.Popen(
        [
            *(str(BIN / "agentflow-eval"), "run", "agent.py:hangs", "envs.evalset.json"),
            *("--runs", "5", "--max-concurrency", "4", "--timeout", "600"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=project,
        env=env,
    )
    deadline = time.monotonic() + 240
    while len(names(root / "setups")) < 4:  # every slot's agent is hanging
        assert process.poll() is None, process.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the trials never started"
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err[-3000:]
    assert names(root / "setups") == names(root / "teardowns")
    assert len(names(root / "setups")) >= 4
    assert names(root / "live") == set()


def test_a_subprocess_the_agent_starts_gets_its_trials_variables(tmp_path: Path) -> None:
    root = tmp_path / "state"
    check = {"check": "envs.py:saw_its_own", "label": "saw its own folder"}
    project = project_with(tmp_path / "project", root, cases=3, end_state=[check])
    done = subprocess.run(
        [
            *(str(BIN / "agentflow-eval"), "run", "agent.py:starts_a_program"),
            *("envs.evalset.json", "--runs", "4", "--max-concurrency", "12", "--json"),
        ],
        capture_output=True,
        text=True,
        cwd=project,
        env=user_env(project, None),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["totals"]["passed"] == 12
    assert len(names(root / "setups")) == len(names(root / "teardowns")) == 12
    assert names(root / "live") == set()
