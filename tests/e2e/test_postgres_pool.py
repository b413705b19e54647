"""A work pool on Prefect's production database: a Prefect server on PostgreSQL (a
throwaway cluster this test starts, from Debian's ``postgresql`` package), two process
workers with their own PREFECT_HOME, deployed from prefect.yaml as deployments/README.md
says. Two evaluate runs started at once all complete, spread over both workers (the
SQLite server of the other tests serializes its writes; this is the database a pool of
workers should share)."""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest
from prefect.client.orchestration import PrefectClient

from tests.support.postgres import postgres_bin, postgres_cluster
from tests.support.prefect_server import (
    ROOT,
    deployable_copy,
    prefect_cli,
    prefect_server,
    process_worker,
)

pytestmark = pytest.mark.e2e
POOL = "e2e-postgres"

AGENT = """
import os
import time
from pathlib import Path

RAN_ON = Path({ran_on!r})


def agent(message):
    RAN_ON.mkdir(exist_ok=True)
    (RAN_ON / Path(os.environ["PREFECT_HOME"]).name).touch()
    time.sleep(2)  # long enough that the two runs overlap: each worker takes one
    return "I cannot tell."
"""


@pytest.fixture(scope="module")
def postgres_server(tmp_path_factory):
    if postgres_bin() is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not installed; .ci/run installs it")
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    root = tmp_path_factory.mktemp("postgres")
    home = root / "server-home"
    home.mkdir()
    with postgres_cluster() as url, prefect_server(home, database_url=url) as api:
        yield api, root


async def _start(api_url: str, parameters: dict, count: int) -> list:
    async with PrefectClient(api=api_url) as client:
        deployment = await client.read_deployment_by_name("evaluate/adhoc")
        return [
            await client.create_flow_run_from_deployment(deployment.id, parameters=parameters)
            for _ in range(count)
        ]


async def _wait_all(api_url: str, runs: list, timeout_s: float) -> list:
    deadline = time.monotonic() + timeout_s
    async with PrefectClient(api=api_url) as client:
        while True:
            current = [await client.read_flow_run(run.id) for run in runs]
            if all(r.state and r.state.is_final() for r in current):
                return current
            if time.monotonic() > deadline:
                raise AssertionError(f"not all runs finished within {timeout_s}s: {current}")
            await asyncio.sleep(2)


def test_a_pool_of_two_workers_on_postgresql_runs_evaluations_at_once(postgres_server, tmp_path):
    api_url, root = postgres_server
    home = root / "deploy-home"
    home.mkdir()
    project = deployable_copy(root / "project", POOL)
    prefect_cli(home, api_url, "work-pool", "create", POOL, "--type", "process", cwd=project)
    prefect_cli(
        home, api_url, "deploy", "--all", cwd=project, AGENTFLOW_EVAL_PROJECT_DIR=str(project)
    )
    ran_on = tmp_path / "ran-on"
    agents = tmp_path / "pool_agents.py"
    agents.write_text(AGENT.format(ran_on=str(ran_on)))
    homes = [root / "worker-a-home", root / "worker-b-home"]
    for worker_home in homes:
        worker_home.mkdir()
    parameters = {
        "agent": f"{agents}:agent",
        "evalset": str(ROOT / "examples" / "weather" / "weather.evalset.json"),
        "runs": 2,
        "output_dir": str(tmp_path / "out"),
    }
    with (
        process_worker(homes[0], api_url, POOL, project, "--limit", "1", name="a") as log_a,
        process_worker(homes[1], api_url, POOL, project, "--limit", "1", name="b") as log_b,
    ):
        runs = asyncio.run(_start(api_url, parameters, 2))
        ended = asyncio.run(_wait_all(api_url, runs, 420))
    logs = "\n".join(log.read_text()[-3000:] for log in (log_a, log_b))
    assert [r.state.name for r in ended] == ["Completed"] * 2, logs
    assert sorted(p.name for p in ran_on.iterdir()) == ["worker-a-home", "worker-b-home"], logs
    results = list((tmp_path / "out").glob("*/*/results.json"))
    assert len(results) == 2
    assert all(json.loads(p.read_text())["totals"]["trials"] > 0 for p in results)
