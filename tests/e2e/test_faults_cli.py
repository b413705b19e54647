"""Fault matrix through the installed ``agentflow-eval`` command, each run a subprocess
that must end on its own:

- area 1: a synchronous agent that hangs forever, and an async agent that blocks the
  event loop, fail their own trials; the CLI finishes and exits 0 (never 3, never hung);
- area 2: refused credentials stop the run with one line and exit 3, no key printed;
- area 5/7: a run in which every trial errored exits 4; hostile ids print escaped;
- area 7: the temporary Prefect server dies with the CLI, whether the CLI gets SIGKILL
  or SIGTERM (no orphan left).

The runs use the session's Prefect server (tests/e2e/conftest.py), but for the last
area's, whose subject is the temporary server.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from tests.support.prefect_db import seeded_home
from tests.support.prefect_server import PrefectServer

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
AGENTFLOW_EVAL = str(Path(sys.executable).parent / "agentflow-eval")
ANSWER = "the answer is 42"
PLANTED_KEY = "sk-PLANTEDcliKEY0123456789abcdefghijkl"

AGENTS = """
import asyncio, os, threading, time

def sync_hang(message: str) -> str:
    if "hang" in message:
        threading.Event().wait()  # never returns
    return "the answer is 42"

async def async_block(message: str) -> str:
    if "hang" in message:
        time.sleep(600)  # blocks the event loop
    await asyncio.sleep(0.01)
    return "the answer is 42"

def always_fails(message: str) -> str:
    raise RuntimeError("this agent is broken")

def slow(message: str) -> str:
    time.sleep(30)
    return "the answer is 42"

def refused():
    from agentflow_eval.agents.litellm_agent import LiteLLMAgent
    return LiteLLMAgent(
        "openai/agent-model",
        api_base=os.environ["SCRIPTED_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
    )
"""


def project(tmp_path: Path, cases: list[tuple[str, str]], eval_set_id: str = "faults") -> Path:
    """The agents module and an eval set of ``(case id, user text)`` cases."""
    (tmp_path / "fault_agents.py").write_text(AGENTS, encoding="utf-8")
    evalset = tmp_path / "faults.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": eval_set_id,
                "eval_cases": [
                    {
                        "eval_id": case_id,
                        "conversation": [{"user_content": text, "expected_final_response": ANSWER}],
                    }
                    for case_id, text in cases
                ],
            }
        ),
        encoding="utf-8",
    )
    config = tmp_path / "test_config.json"
    config.write_text(json.dumps({"criteria": {"response_match_score": 0.8}}), encoding="utf-8")
    return evalset


def env_for(tmp_path: Path, api_url: str | None, **extra: str) -> dict[str, str]:
    """The CLI's environment: Prefect's API at ``api_url``, or (None) none, so the CLI
    launches its temporary server."""
    env = dict(os.environ)
    env.pop("PREFECT_API_URL", None)
    if api_url:
        env["PREFECT_API_URL"] = api_url
    env.update(
        PREFECT_HOME=str(tmp_path / "prefect" if api_url else seeded_home(tmp_path / "prefect")),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        **extra,
    )
    return env


@pytest.fixture
def run_cli(tmp_path: Path, shared_prefect: PrefectServer):
    """``run_cli(*args, env=None)``: ``agentflow-eval run ARGS --output tmp_path/out`` on
    the session's Prefect server."""

    def run(*args: str, env: dict[str, str] | None = None, timeout_s: float = 240):
        return subprocess.run(
            [AGENTFLOW_EVAL, "run", *args, "--output", str(tmp_path / "out")],
            cwd=tmp_path,
            env=env or env_for(tmp_path, shared_prefect.api_url),
            capture_output=True,
            text=True,
            timeout=timeout_s,  # a CLI that does not end on its own fails the test here
        )

    return run


def results(tmp_path: Path) -> dict:
    (path,) = (tmp_path / "out").glob("*/*/results.json")
    return json.loads(path.read_text(encoding="utf-8"))


def trial_errors(tmp_path: Path) -> list[dict]:
    (path,) = (tmp_path / "out").glob("*/*/trials.jsonl")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [record["error"] for record in records if record["error"]]


HANGING = [("hang0", "please hang"), ("hang1", "please hang"), ("ok0", "?"), ("ok1", "?")]


def test_a_hung_sync_agent_neither_keeps_the_cli_alive_nor_starves_it(
    tmp_path: Path, run_cli
) -> None:
    evalset = project(tmp_path, HANGING + [(f"ok{i}", "?") for i in range(2, 6)])
    done = run_cli(
        "fault_agents.py:sync_hang",
        str(evalset),
        "--runs",
        "2",
        "--timeout",
        "3",
        "--max-concurrency",
        "4",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    totals = results(tmp_path)["totals"]
    assert (totals["trials"], totals["passed"], totals["errored"]) == (16, 12, 4)
    assert {e["kind"] for e in trial_errors(tmp_path)} == {"timeout"}


def test_an_async_agent_blocking_the_loop_is_stopped_and_named(tmp_path: Path, run_cli) -> None:
    evalset = project(tmp_path, HANGING)
    done = run_cli("fault_agents.py:async_block", str(evalset), "--runs", "1", "--timeout", "3")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Prefect" not in done.stderr
    errors = trial_errors(tmp_path)
    assert len(errors) == 2
    for error in errors:
        assert error["type"] == "EventLoopBlocked"
        assert (
            "agent 'async_block' blocked the event loop in async_block (fault_agents.py:"
            in (error["message"])
        )
    assert results(tmp_path)["totals"]["passed"] == 2


def test_refused_credentials_stop_the_cli_in_one_line(
    tmp_path: Path, run_cli, shared_prefect: PrefectServer
) -> None:
    evalset = project(tmp_path, [(f"c{i}", "?") for i in range(6)])
    with ScriptedOpenAIServer(
        handler=lambda body: Reply.error(401, f"Incorrect API key provided: {PLANTED_KEY}")
    ) as server:
        env = env_for(
            tmp_path, shared_prefect.api_url, SCRIPTED_URL=server.url, OPENAI_API_KEY=PLANTED_KEY
        )
        done = run_cli("fault_agents.py:refused", str(evalset), "--runs", "2", env=env)
        requests = server.request_count
    assert done.returncode == 3, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("agentflow-eval: error: model openai/agent-model: authentication failed")
    assert "the run stopped" in last and "--resume " in last
    assert "Traceback" not in done.stderr  # Prefect's own failure logs stay off the terminal
    assert requests <= 12  # the first refusal stops the run; no call is retried
    assert PLANTED_KEY not in done.stdout + done.stderr
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert PLANTED_KEY not in path.read_text(encoding="utf-8", errors="replace")


def test_every_trial_errored_exits_4_and_hostile_ids_print_escaped(tmp_path: Path, run_cli) -> None:
    hostile = [
        ("\x1b[2Jwipe", "?"),
        ("nul\x00byte", "?"),
        ("cr\roverwrite", "?"),
        ("bidi\u202eevil", "?"),
    ]
    evalset = project(tmp_path, hostile, eval_set_id="set\x1b]0;title\x07")
    done = run_cli("fault_agents.py:always_fails", str(evalset), "--runs", "1")
    assert done.returncode == 4, done.stderr[-3000:]
    assert "every trial errored (4 of 4)" in done.stderr
    printed = done.stdout + done.stderr
    for char in ("\x1b", "\x00", "\r", "\x07", "\u202e"):
        assert char not in printed
    assert "\\x1b[2Jwipe" in done.stdout and "nul\\x00byte" in done.stdout
    assert "cr\\roverwrite" in done.stdout and "bidi\\u202eevil" in done.stdout


# ------------------------------------------------------------------- no orphan server


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):  # the thread ended meanwhile
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status  # a zombie is dead, only not yet reaped


def serving(pid: int) -> bool:
    """Whether the temporary server ``pid`` answers its health check (its port is in its
    command line, after the code it runs)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        port = int(argv[argv.index(b"-c") + 3])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=1) as reply:
            return reply.status == 200
    except (OSError, ValueError, IndexError):
        return False


@pytest.fixture
def cli_with_server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A CLI run whose temporary Prefect server is up and serving, and that server's pid."""
    evalset = project(tmp_path, [("slow0", "?")])
    log = (tmp_path / "cli.log").open("wb")
    process = subprocess.Popen(
        [
            AGENTFLOW_EVAL,
            "run",
            "fault_agents.py:slow",
            str(evalset),
            "--runs",
            "1",
            "--output",
            str(tmp_path / "out"),
        ],
        cwd=tmp_path,
        env=env_for(tmp_path, None),  # no API: the CLI launches its temporary server
        stdout=log,
        stderr=log,
    )
    server: int | None = None
    up = False  # once it answered: a later health check may time out on a busy machine
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and not up:
            assert process.poll() is None, (tmp_path / "cli.log").read_text()[-3000:]
            server = server or next(iter(children_of(process.pid)), None)
            up = server is not None and serving(server)
            time.sleep(0.1)
        assert server is not None and up, "the server did not start in time"
        yield process, server
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        log.close()


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_the_temporary_server_dies_with_the_cli(cli_with_server, signum: int) -> None:
    process, server = cli_with_server
    process.send_signal(signum)
    process.wait(timeout=60)
    deadline = time.monotonic() + 30
    while alive(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    orphan = alive(server)
    if orphan:
        os.kill(server, signal.SIGKILL)
    assert not orphan, "the temporary Prefect server outlived the CLI"
