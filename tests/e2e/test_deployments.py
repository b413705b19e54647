"""prefect.yaml's deployments on a real Prefect server with a real process worker: a run
started by hand (as from the UI), one triggered by a deploy event, and the nightly schedule."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from prefect.client.orchestration import PrefectClient

from tests.support.prefect_server import prefect_cli, prefect_server, process_worker

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
POOL = "agentflow-eval"


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    home = tmp_path_factory.mktemp("prefect-home")
    with prefect_server(home) as api_url:
        prefect_cli(home, api_url, "work-pool", "create", POOL, "--type", "process", cwd=ROOT)
        prefect_cli(
            home, api_url, "deploy", "--all", cwd=ROOT, AGENTFLOW_EVAL_PROJECT_DIR=str(ROOT)
        )
        with process_worker(home, api_url, POOL, ROOT) as worker_log:
            yield home, api_url, worker_log


async def _wait_for_runs(api_url: str, deployment: str, count: int, timeout_s: float = 240):
    async with PrefectClient(api=api_url) as client:
        target = await client.read_deployment_by_name(f"evaluate/{deployment}")
        for _ in range(int(timeout_s / 2)):
            runs = [r for r in await client.read_flow_runs() if r.deployment_id == target.id]
            finished = [r for r in runs if r.state and r.state.is_final()]
            if len(finished) >= count:
                return finished
            await asyncio.sleep(2)
    raise AssertionError(f"no finished run of {deployment} within {timeout_s}s")


def _results(output_dir: Path) -> dict:
    (path,) = output_dir.glob("*/*/results.json")
    return json.loads(path.read_text())


def test_a_run_started_by_hand_evaluates_and_writes_results(deployed, tmp_path):
    home, api_url, worker_log = deployed
    out = tmp_path / "adhoc"
    params = {
        "agent": "examples.weather.agent:agent",
        "evalset": "examples/weather/weather.evalset.json",
        "config": "examples/weather/eval_config.json",
        "runs": 2,
        "output_dir": str(out),
    }
    prefect_cli(
        home,
        api_url,
        "deployment",
        "run",
        "evaluate/adhoc",
        "--param",
        f"params={json.dumps(params)}",
        cwd=ROOT,
    )
    (run,) = asyncio.run(_wait_for_runs(api_url, "adhoc", 1))
    assert run.state.is_completed(), worker_log.read_text()[-3000:]
    results = _results(out)
    assert results["totals"]["trials"] == 4
    assert results["runs_per_case"] == 2


def test_a_deploy_event_triggers_an_evaluation_of_that_agent(deployed, tmp_path):
    home, api_url, worker_log = deployed
    out = tmp_path / "on-deploy"
    agent_file = tmp_path / "v2_agent.py"
    agent_file.write_text("def agent(message):\n    return 'It is sunny in New York, 72°F.'\n")
    resource = {
        "prefect.resource.id": "agentflow.agent.weather",
        "agentflow.agent.spec": f"{agent_file}:agent",
    }
    payload = {
        "evalset": "examples/weather/weather.evalset.json",
        "config": "examples/weather/eval_config.json",
        "output_dir": str(out),
    }
    prefect_cli(
        home,
        api_url,
        "event",
        "emit",
        "agentflow.agent.deployed",
        "--resource",
        json.dumps(resource),
        "--payload",
        json.dumps(payload),
        cwd=ROOT,
    )
    (run,) = asyncio.run(_wait_for_runs(api_url, "on-agent-deployed", 1))
    assert run.state.is_completed(), worker_log.read_text()[-3000:]
    assert run.parameters["params"]["agent"] == f"{agent_file}:agent"
    results = _results(out)
    assert results["agent"] == "agent"
    assert results["totals"]["trials"] == 10  # config's runs: 5 × 2 cases


def test_the_nightly_deployment_is_scheduled(deployed):
    _, api_url, _ = deployed

    async def scheduled():
        async with PrefectClient(api=api_url) as client:
            deployment = await client.read_deployment_by_name("evaluate/weather-nightly")
            crons = [s.schedule.cron for s in deployment.schedules]
            for _ in range(30):
                runs = [
                    r
                    for r in await client.read_flow_runs()
                    if r.deployment_id == deployment.id and r.state_name == "Scheduled"
                ]
                if runs:
                    return crons, runs
                await asyncio.sleep(1)
            return crons, []

    crons, runs = asyncio.run(scheduled())
    assert crons == ["0 3 * * *"]
    assert runs and all(r.expected_start_time.hour == 3 for r in runs)
