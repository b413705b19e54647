"""The CLI's temporary Prefect API: it serves a flow run, stands down when Prefect already
has an API, and is stopped afterwards; a CLI run's record on it is true (the trials are
inside the run-trials task run); a server that cannot start ends the run with exit 3."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.events.worker import EventsWorker
from prefect.logging.handlers import APILogWorker
from prefect.settings import PREFECT_API_URL, PREFECT_HOME, temporary_settings

from agentflow_eval.flows.support.temporary_api import TemporaryPrefectAPI
from tests.support.prefect_db import seeded_home
from tests.support.prefect_server import prefect_env, prefect_server

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
    monkeypatch.setenv("PREFECT_HOME", str(seeded_home(tmp_path / "prefect")))
    with temporary_settings(
        updates={PREFECT_HOME: tmp_path / "prefect"}, restore_defaults={PREFECT_API_URL}
    ):
        yield


def test_a_flow_runs_against_the_launched_server(no_api) -> None:
    api = TemporaryPrefectAPI.launch()
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
    api = TemporaryPrefectAPI.launch()
    assert api is not None
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        assert not api.wanted()
        assert api.process.poll() is not None  # stood down at once


def test_nothing_is_launched_when_the_environment_names_an_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    assert TemporaryPrefectAPI.launch() is None


ROOT = Path(__file__).resolve().parents[2]
AGENTFLOW_EVAL = str(Path(sys.executable).parent / "agentflow-eval")
CASES, RUNS = 4, 3


def _slow_agent_project(tmp_path: Path) -> tuple[Path, Path]:
    """An agent that takes a visible while per turn, and an eval set it passes."""
    agent = tmp_path / "slow_agent.py"
    agent.write_text(
        "import time\n\ndef agent(message):\n    time.sleep(0.2)\n    return 'the answer is 42'\n",
        encoding="utf-8",
    )
    evalset = tmp_path / "quick.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "quick",
                "eval_cases": [
                    {
                        "eval_id": f"case{i}",
                        "conversation": [
                            {"user_content": "?", "expected_final_response": "the answer is 42"}
                        ],
                    }
                    for i in range(CASES)
                ],
            }
        ),
        encoding="utf-8",
    )
    return agent, evalset


def _trial_span(run_dir: Path) -> tuple[float, float]:
    """When the run's first trial started and its last one ended (epoch seconds)."""
    records = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]
    assert len(records) == CASES * RUNS
    starts = [datetime.fromisoformat(r["started_at"]).timestamp() for r in records]
    ends = [s + r["duration_ms"] / 1000 for s, r in zip(starts, records, strict=True)]
    return min(starts), max(ends)


async def _read_back(api_url: str) -> dict:
    """The one evaluate flow run on ``api_url``: its task runs by name, their logs and
    the artifacts attached to them."""
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterTaskRunId,
        LogFilter,
        LogFilterTaskRunId,
        TaskRunFilter,
        TaskRunFilterFlowRunId,
    )

    with temporary_settings(updates={PREFECT_API_URL: api_url}):
        async with get_client() as client:
            (flow_run,) = await client.read_flow_runs()
            task_runs = await client.read_task_runs(
                task_run_filter=TaskRunFilter(
                    flow_run_id=TaskRunFilterFlowRunId(any_=[flow_run.id])
                )
            )
            # task run names are "<task name>-<suffix>"
            by_name = {run.name.rsplit("-", 1)[0]: run for run in task_runs}
            trials_run = by_name["run-trials"]
            logs = await client.read_logs(
                log_filter=LogFilter(task_run_id=LogFilterTaskRunId(any_=[trials_run.id]))
            )
            artifacts = await client.read_artifacts(
                artifact_filter=ArtifactFilter(
                    task_run_id=ArtifactFilterTaskRunId(any_=[trials_run.id])
                )
            )
    return {"flow_run": flow_run, "task_runs": by_name, "logs": logs, "artifacts": artifacts}


def _run_on_the_temporary_api(
    tmp_path: Path, home: Path, *flags: str
) -> subprocess.CompletedProcess[str]:
    """The CLI on the slow agent's project (run folders in ``tmp_path/out``), with no
    Prefect API configured: it launches its temporary server on the Prefect home ``home``,
    whose logs go to the API as well."""
    agent, evalset = _slow_agent_project(tmp_path)
    env = prefect_env(seeded_home(home))
    env.pop("PREFECT_API_URL", None)
    env["PREFECT_LOGGING_TO_API_ENABLED"] = "true"
    return subprocess.run(
        [
            *(AGENTFLOW_EVAL, "run", f"{agent}:agent", str(evalset)),
            *(*flags, "--output", str(tmp_path / "out")),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_cli_runs_trials_are_inside_its_run_trials_task_run(tmp_path: Path) -> None:
    """Run the CLI on its temporary server, then read the run back from a Prefect server on
    the same database: the run-trials task run holds the trials — its start and end
    bracket every trial, its log reports them, its progress artifact is theirs — and the
    stages ran in order inside the flow run."""
    home = tmp_path / "prefect"
    home.mkdir()
    result = _run_on_the_temporary_api(
        tmp_path, home, "--runs", str(RUNS), "--max-concurrency", "2"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (run_dir,) = (tmp_path / "out" / "quick").iterdir()
    first_start, last_end = _trial_span(run_dir)

    with prefect_server(home) as api_url:
        record = asyncio.run(_read_back(api_url))

    flow_run, task_runs = record["flow_run"], record["task_runs"]
    assert flow_run.name and flow_run.state.is_completed()
    # the CLI planned the run itself, before the flow run: no load-evalset task run
    assert set(task_runs) >= {"run-trials", "judge", "aggregate", "report"}
    assert "load-evalset" not in task_runs
    trials_run = task_runs["run-trials"]
    assert trials_run.state.is_completed()
    assert trials_run.start_time.timestamp() <= first_start
    assert trials_run.end_time.timestamp() >= last_end
    # 12 trials of 0.2 s, two at a time, take over a second: the task run's own duration
    assert trials_run.total_run_time.total_seconds() >= last_end - first_start >= 1.0
    assert flow_run.start_time.timestamp() <= first_start
    assert flow_run.end_time.timestamp() >= last_end
    order = ["run-trials", "judge", "aggregate", "report"]
    starts = [task_runs[name].start_time for name in order]
    assert starts == sorted(starts)
    messages = [log.message for log in record["logs"]]
    assert f"trials: {CASES * RUNS}/{CASES * RUNS} done (0 errored)" in messages
    assert any(
        m.startswith(f"trials: {CASES * RUNS} run (0 errored), 0 already done") for m in messages
    )
    (progress,) = [a for a in record["artifacts"] if a.type == "progress"]
    # keyed by agent and eval set (the CLI has no deployment): histories do not mix
    # keyed in the ad-hoc runs' history
    assert progress.data == 100.0 and progress.key == "adhoc-slow-agent-agent-quick-progress"


def test_the_cli_exits_3_when_the_server_cannot_start(tmp_path: Path) -> None:
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
    evalset = ROOT / "examples/weather/weather.evalset.json"
    result = subprocess.run(
        [
            *(AGENTFLOW_EVAL, "run", f"{tmp_path / 'echo.py'}:agent", str(evalset)),
            *("--runs", "1", "--output", str(tmp_path / "out")),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 3, result.stderr[-3000:]
    assert "agentflow-eval: error: the temporary Prefect server exited with code 3" in result.stderr
    # the server's own output is kept from the terminal: its last words are quoted in the
    # error's one line, its traceback is not printed
    (said,) = [line for line in result.stderr.splitlines() if "exited with code 3" in line]
    assert "exited with code 3: " in said and "Traceback" not in result.stderr
    assert "no trial has run" in result.stderr
    # the run was planned before the flow (its folder checked and locked), and a new run
    # that never started leaves no folder behind
    assert not list((tmp_path / "out").rglob("run.json"))


def test_verbose_output_links_nothing_into_the_temporary_server(tmp_path: Path) -> None:
    """The temporary server is gone when the command returns (and serves no UI): Prefect's
    log, shown with --verbose, carries no "View at" link into it."""
    result = _run_on_the_temporary_api(tmp_path, tmp_path / "prefect", "--runs", "1", "--verbose")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Beginning flow run" in result.stderr  # Prefect's log is shown
    assert "View at" not in result.stderr
    assert "http://127.0.0.1" not in result.stdout + result.stderr
