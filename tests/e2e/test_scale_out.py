"""A pool of process workers on a real Prefect server, each with its own PREFECT_HOME (as
separate machines would be), sharing one S3-compatible store (SeaweedFS) through a
prefect-aws S3Bucket block:

- a run with shards=2 starts two flow runs of its deployment, which two different
  workers run; their results merge into one run whose counts equal a single-process run;
- the judge cache lives in that bucket: the single-process run, on another worker, pays
  no judge call for verdicts the shards paid for.

Each worker takes one flow run at a time (--limit 1), so the parent, waiting on its
shards, holds one worker and the shards must go to the other two."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from prefect.client.orchestration import PrefectClient

from tests.e2e.test_deployments import POOL, deployable_copy
from tests.support.prefect_server import prefect_cli, prefect_server, process_worker
from tests.support.seaweed import SeaweedFS

pytestmark = pytest.mark.e2e
BUCKET = "agentflow-team"
BLOCK = "s3-bucket/agentflow"


def _save_bucket_block(api_url: str, store: SeaweedFS) -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from prefect_aws import AwsClientParameters, AwsCredentials, S3Bucket

    credentials = AwsCredentials(
        aws_access_key_id=store.access_key,
        aws_secret_access_key=store.secret_key,
        region_name=store.region,
        aws_client_parameters=AwsClientParameters(
            endpoint_url=store.endpoint_url, config={"s3": {"addressing_style": "path"}}
        ),
    )
    with temporary_settings({PREFECT_API_URL: api_url}):
        S3Bucket(bucket_name=BUCKET, credentials=credentials).save("agentflow", overwrite=True)


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale-out")
    store = SeaweedFS(root / "seaweed")
    store.start()
    try:
        store.client().create_bucket(Bucket=BUCKET)
        home = root / "server-home"
        home.mkdir()
        project = deployable_copy(root / "project")
        with prefect_server(home) as api_url:
            prefect_cli(
                home, api_url, "work-pool", "create", POOL, "--type", "process", cwd=project
            )
            prefect_cli(home, api_url, "deploy", "--name", "adhoc", cwd=project)
            _save_bucket_block(api_url, store)
            homes = [root / f"worker-{n}-home" for n in "abc"]
            for worker_home in homes:
                worker_home.mkdir()
            with (
                process_worker(homes[0], api_url, POOL, project, "--limit", "1", name="a") as a,
                process_worker(homes[1], api_url, POOL, project, "--limit", "1", name="b") as b,
                process_worker(homes[2], api_url, POOL, project, "--limit", "1", name="c") as c,
            ):
                yield api_url, [a, b, c], home, project
    finally:
        store.stop()


async def _run(api_url: str, parameters: dict) -> object:
    async with PrefectClient(api=api_url) as client:
        deployment = await client.read_deployment_by_name("evaluate/adhoc")
        run = await client.create_flow_run_from_deployment(deployment.id, parameters=parameters)
        for _ in range(200):
            run = await client.read_flow_run(run.id)
            if run.state and run.state.is_final():
                return run
            await asyncio.sleep(2)
    raise AssertionError("the run did not finish")


async def _shard_runs(api_url: str) -> list:
    async with PrefectClient(api=api_url) as client:
        runs = await client.read_flow_runs()
    return [r for r in runs if r.parameters.get("shard")]


def _results(output_dir: Path) -> dict:
    (path,) = output_dir.glob("*/*/results.json")
    return json.loads(path.read_text())


def _counts(results: dict) -> dict:
    totals = results["totals"]
    return {
        "totals": {k: totals[k] for k in ("cases", "trials", "passed", "failed", "errored")},
        "cases": {
            c["case_id"]: (c["runs"], c["passed"], c["failed"], c["errored"])
            for c in results["cases"]
        },
    }


def test_shards_run_on_two_workers_and_merge_like_one_run_with_a_shared_judge_cache(pool, tmp_path):
    api_url, worker_logs, _, _ = pool
    common = {"runs": 3, "shared_storage": BLOCK}
    sharded = asyncio.run(
        _run(api_url, {**common, "shards": 2, "output_dir": str(tmp_path / "sharded")})
    )
    logs = [log.read_text() for log in worker_logs]
    assert sharded.state.is_completed(), sharded.state.message + "\n" + "\n".join(logs)[-4000:]

    shards = asyncio.run(_shard_runs(api_url))
    assert len(shards) == 2 and all(r.state.is_completed() for r in shards)
    ran_on = {n for r in shards for n, log in enumerate(logs) if str(r.id) in log}
    assert len(ran_on) == 2, "each shard ran on its own worker"
    parent_on = {n for n, log in enumerate(logs) if str(sharded.id) in log}
    assert parent_on and parent_on.isdisjoint(ran_on)
    assert all(r.parent_task_run_id for r in shards)  # shown under the parent run

    # the shards' own run folders sit beside the parent's here (one machine); the
    # parent's is the one holding the shards' results
    (parent_dir,) = [p.parent for p in (tmp_path / "sharded").glob("*/*/shards")]
    merged = json.loads((parent_dir / "results.json").read_text())
    assert merged["totals"]["judge_calls"] > 0  # the shards paid for the verdicts

    single = asyncio.run(_run(api_url, {**common, "output_dir": str(tmp_path / "single")}))
    assert single.state.is_completed(), single.state.message
    alone = _results(tmp_path / "single")
    assert _counts(merged) == _counts(alone)
    assert merged["runs_per_case"] == alone["runs_per_case"] == 3
    # the verdicts the shards paid for came from the bucket, on another worker
    assert alone["totals"]["judge_calls"] == 0
    assert alone["totals"]["judge_cache_hits"] > 0
    # whichever worker ran it, that worker's own PREFECT_HOME held at most one shard's
    # verdicts: the shards ran on two workers, so 0 calls means the bucket answered
