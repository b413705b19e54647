"""The CLI's early-started temporary Prefect API: it serves a flow run, stands down when
Prefect already has an API, and is stopped afterwards; the run's trials start while it
boots, and the flow joins them."""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.request
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from agentflow_eval.flows.support.temporary_api import LocalPrefectAPI
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.events.worker import EventsWorker
from prefect.logging.handlers import APILogWorker
from prefect.settings import PREFECT_API_URL, PREFECT_HOME, temporary_settings

pytestmark = pytest.mark.e2e


@flow
async def _which_api() -> str:
    async with get_client() as client:
        return str(client.api_url)


async def _flow_named(name: str) -> str:
    async with get_client() as client:
        return (await client.read_flow_by_name(name)).name


@pytest.fixture
def no_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect"))
    with temporary_settings(
        updates={PREFECT_HOME: tmp_path / "prefect"}, restore_defaults={PREFECT_API_URL}
    ):
        yield


def test_a_flow_runs_against_the_early_started_server(no_api) -> None:
    api = LocalPrefectAPI.launch()
    assert api is not None
    assert api.wanted()
    asyncio.run(api.ready())
    assert api.healthy()
    with api.serving() as url:
        assert url == api.url
        with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
            assert response.status == 200
        assert asyncio.run(_which_api()).rstrip("/") == url
        api.warm_up("warmed-up")  # makes a flow run's first requests, creating the flow
        assert asyncio.run(_flow_named("warmed-up")) == "warmed-up"
        EventsWorker.drain_all()
        APILogWorker.drain_all()
    assert api.process.poll() is None  # it serves until exit, as Prefect's own server does
    api.stop()
    assert api.process.poll() is not None


def test_it_stands_down_when_prefect_already_has_an_api(no_api) -> None:
    api = LocalPrefectAPI.launch()
    assert api is not None
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        assert not api.wanted()
        assert api.process.poll() is not None  # stood down at once


def test_nothing_is_launched_when_the_environment_names_an_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    assert LocalPrefectAPI.launch() is None


def _uvicorn_children() -> set[int]:
    """This process's child processes running uvicorn (Prefect's API servers)."""
    found = set()
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            pid, rest = status.read_text().split(" ", 1)
            parent = int(rest.rsplit(")", 1)[1].split()[1])
            command = (status.parent / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"uvicorn" in command:
            found.add(int(pid))
    return found


class _RecordingAPI(LocalPrefectAPI):
    """Notes when the server first answered."""

    ready_at: float | None = None

    async def ready(self, timeout_s: float = 90.0) -> None:
        await super().ready(timeout_s)
        self.ready_at = time.time()


async def _flow_runs() -> list:
    async with get_client() as client:
        return await client.read_flow_runs()


def test_trials_start_while_the_server_boots_and_the_flow_takes_them_over(
    no_api, tmp_path: Path
) -> None:
    from agentflow_eval.flows.support.local_run import evaluate_here

    from agentflow_eval.agents.python import PythonAgent
    from agentflow_eval.models.params import EvaluateParams

    async def answer(message: str) -> str:
        await asyncio.sleep(0.05)
        return "the answer is 42"

    (tmp_path / "unused_agent.py").write_text("def agent(message):\n    return message\n")
    evalset = tmp_path / "quick.evalset.json"
    cases, runs = 6, 3
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "quick",
                "eval_cases": [
                    {
                        "eval_id": f"case{i}",
                        "conversation": [
                            {
                                "user_content": "?",
                                "expected_final_response": "the answer is 42",
                            }
                        ],
                    }
                    for i in range(cases)
                ],
            }
        ),
        encoding="utf-8",
    )
    params = EvaluateParams(
        agent=f"{tmp_path / 'unused_agent.py'}:agent",  # for the flow's record
        evalset=str(evalset),
        runs=runs,
        output_dir=str(tmp_path / "out"),
    )
    servers_before = _uvicorn_children()
    launched = LocalPrefectAPI.launch()
    assert launched is not None
    api = _RecordingAPI(launched.process, launched.port)

    outcome = asyncio.run(evaluate_here(params, PythonAgent(answer, name="answer"), api))

    assert outcome.run.totals.trials == cases * runs
    assert outcome.run.totals.passed == cases * runs
    lines = (outcome.run_dir / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    keys = Counter((r["case_id"], r["trial_index"]) for r in records)
    assert set(keys) == {(f"case{i}", t) for i in range(cases) for t in range(runs)}
    assert set(keys.values()) == {1}  # joined, not run again by the flow
    first_trial = min(datetime.fromisoformat(r["started_at"]).timestamp() for r in records)
    assert api.ready_at is not None and first_trial < api.ready_at  # began during the boot
    last_end = max(
        datetime.fromisoformat(r["started_at"]).timestamp() + r["duration_ms"] / 1000
        for r in records
    )
    with api.serving():
        (flow_run,) = asyncio.run(_flow_runs())
    assert flow_run.state is not None and flow_run.state.is_completed()
    assert flow_run.start_time is not None
    assert flow_run.start_time.timestamp() >= last_end  # the flow began once they were done
    # Prefect started no server of its own
    assert _uvicorn_children() - servers_before == {api.process.pid}
    assert "resume" not in json.loads((outcome.run_dir / "run.json").read_text())["params"]
    EventsWorker.drain_all()
    APILogWorker.drain_all()
    api.stop()


def test_a_server_that_does_not_start_stops_the_run_and_keeps_its_trials(
    no_api, tmp_path: Path
) -> None:
    import socket
    import subprocess
    import sys

    from agentflow_eval.flows.support.local_run import TemporaryAPIError, evaluate_here

    from agentflow_eval.agents.python import PythonAgent
    from agentflow_eval.models.params import EvaluateParams

    evalset = tmp_path / "one.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "one",
                "eval_cases": [{"eval_id": "c", "conversation": [{"user_content": "hi"}]}],
            }
        ),
        encoding="utf-8",
    )
    (tmp_path / "echo.py").write_text("def agent(message):\n    return message\n")
    params = EvaluateParams(
        agent=f"{tmp_path / 'echo.py'}:agent",
        evalset=str(evalset),
        runs=2,
        output_dir=str(tmp_path / "out"),
    )
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # a "server" that fails after a second, as one with a broken database would
    dying = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1); exit(3)"])
    api = LocalPrefectAPI(dying, port)

    with pytest.raises(TemporaryAPIError) as raised:
        asyncio.run(evaluate_here(params, PythonAgent(lambda message: "hello"), api))

    (run_dir,) = (tmp_path / "out").glob("*/*")
    assert "exited with code 3" in str(raised.value)
    assert f"agentflow-eval run --resume {run_dir}" in str(raised.value)
    trials = (run_dir / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(trials) == 2  # the trials finished while it failed, kept for the resume


def test_the_cli_exits_3_with_the_resume_command_when_the_server_cannot_start(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    (tmp_path / "not-a-folder").write_text("")
    (tmp_path / "echo.py").write_text("def agent(message):\n    return message\n")
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect"),
        # a database Prefect's server cannot open: it exits during startup
        "PREFECT_API_DATABASE_CONNECTION_URL": (
            f"sqlite+aiosqlite:///{tmp_path / 'not-a-folder' / 'prefect.db'}"
        ),
    }
    env.pop("PREFECT_API_URL", None)
    evalset = Path(__file__).resolve().parents[2] / "examples/weather/weather.evalset.json"
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "agentflow-eval"),
            *("run", f"{tmp_path / 'echo.py'}:agent", str(evalset)),
            *("--runs", "1", "--output", str(tmp_path / "out")),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (run_dir,) = (tmp_path / "out").glob("*/*")
    assert result.returncode == 3, result.stderr[-3000:]
    assert "agentflow-eval: error: the temporary Prefect server exited with code 3" in result.stderr
    assert f"agentflow-eval run --resume {run_dir}" in result.stderr
    assert len((run_dir / "trials.jsonl").read_text().splitlines()) == 2  # both cases ran
