"""A pool of process workers on a real Prefect server, each with its own PREFECT_HOME (as
separate machines would be), sharing one S3-compatible store (SeaweedFS) through a
prefect-aws S3Bucket block:

- a run with shards=2 starts two flow runs of its deployment, which two different
  workers run; one of them dies (once), which fails the parent naming it, and resuming
  the parent runs that shard alone; the results merge into one run whose counts equal a
  single-process run's;
- the judge cache lives in that bucket: the single-process run, on another worker, pays
  no judge call for verdicts the shards paid for.

Each worker takes one flow run at a time (--limit 1), so the parent, waiting on its
shards, holds one worker and the shards must go to the other two. The server and the
store are the session's (tests/e2e/conftest.py): the workers serve a pool of their own,
the judge cache has a bucket of its own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from prefect.client.orchestration import PrefectClient
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterDeploymentId

from tests.support.prefect_server import (
    PrefectServer,
    deployable_copy,
    prefect_cli,
    process_worker,
)
from tests.support.seaweed import SeaweedFS

pytestmark = pytest.mark.e2e
POOL = "e2e-scale-out"
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
def pool(tmp_path_factory, shared_prefect: PrefectServer, shared_seaweed: SeaweedFS):
    root = tmp_path_factory.mktemp("scale-out")
    shared_seaweed.client().create_bucket(Bucket=BUCKET)
    home = root / "deploy-home"
    home.mkdir()
    project = deployable_copy(root / "project", POOL)
    api_url = shared_prefect.api_url
    prefect_cli(home, api_url, "work-pool", "create", POOL, "--type", "process", cwd=project)
    prefect_cli(home, api_url, "deploy", "--name", "adhoc", cwd=project)
    _save_bucket_block(api_url, shared_seaweed)
    homes = [root / f"worker-{n}-home" for n in "abc"]
    for worker_home in homes:
        worker_home.mkdir()
    with (
        process_worker(homes[0], api_url, POOL, project, "--limit", "1", name="a") as a,
        process_worker(homes[1], api_url, POOL, project, "--limit", "1", name="b") as b,
        process_worker(homes[2], api_url, POOL, project, "--limit", "1", name="c") as c,
    ):
        yield api_url, [a, b, c], home, project


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


async def _shard_runs(api_url: str, output_dir: Path) -> list:
    """The shard runs of the evaluate/adhoc runs writing under ``output_dir``."""
    async with PrefectClient(api=api_url) as client:
        adhoc = await client.read_deployment_by_name("evaluate/adhoc")
        runs = await client.read_flow_runs(
            flow_run_filter=FlowRunFilter(deployment_id=FlowRunFilterDeploymentId(any_=[adhoc.id]))
        )
    mine = [r for r in runs if str(r.parameters.get("output_dir", "")).startswith(str(output_dir))]
    return [r for r in mine if r.parameters.get("shard")]


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


CRASH_ONCE = """
import os
import signal
from pathlib import Path

MARKER = Path({marker!r})


def agent(message):
    if "Tokyo" in message and not MARKER.exists():  # a worker dying mid-shard, once
        MARKER.write_text("crashed")
        os.kill(os.getpid(), signal.SIGKILL)  # (an agent's os._exit only fails its trial)
    return "It is sunny in New York, 72°F." if "New York" in message else "Rain in Tokyo."
"""


def test_shards_spread_over_workers_resume_alone_and_merge_like_one_run(pool, tmp_path):
    api_url, worker_logs, _, _ = pool
    agent_file = tmp_path / "crash_once.py"
    agent_file.write_text(CRASH_ONCE.format(marker=str(tmp_path / "crashed")))
    common = {"agent": f"{agent_file}:agent", "runs": 3, "shared_storage": BLOCK}
    sharded = {**common, "shards": 2, "output_dir": str(tmp_path / "sharded")}

    # 1. one shard's worker process dies: the parent fails, naming it; the other is kept
    first = asyncio.run(_run(api_url, sharded))
    assert first.state.is_failed(), first.state.message
    assert "shard 2 of 2" in first.state.message and "resume=" in first.state.message
    (run_dir,) = [p.parent for p in (tmp_path / "sharded").glob("*/*/shards")]
    assert (run_dir / "shards" / "shard-0" / "judged.jsonl").is_file()
    assert not (run_dir / "shards" / "shard-1").exists()

    # 2. resumed, only that shard runs again; the whole run completes
    resumed = asyncio.run(_run(api_url, {**sharded, "resume": str(run_dir)}))
    logs = [log.read_text() for log in worker_logs]
    assert resumed.state.is_completed(), resumed.state.message + "\n".join(logs)[-4000:]
    shards = asyncio.run(_shard_runs(api_url, tmp_path / "sharded"))
    assert sorted(r.parameters["shard"]["index"] for r in shards) == [0, 1, 1]
    finished = [r for r in shards if r.state.is_completed()]
    assert len(finished) == 2, [(r.name, r.state_name) for r in shards]

    # the worker that ran a flow run logs its beginning (another worker may have tried to
    # submit it too, and logs only its id and the abort)
    def workers_of(runs: list) -> set[int]:
        return {
            n
            for r in runs
            for n, log in enumerate(logs)
            if f"Flow run '{r.name}' - Beginning" in log
        }

    # the first attempt's two shards ran at once, so on two workers (each takes one run);
    # the resumed shard ran on whichever worker was free
    first_attempt = [r for r in shards if r.name.startswith(f"{first.name}-shard-")]
    assert len(first_attempt) == 2 and len(workers_of(first_attempt)) == 2, (
        f"the shards ran on two workers: {[(r.name, r.state_name) for r in shards]}\n"
        + "\n".join(log[-2000:] for log in logs)
    )
    assert all(workers_of([r]) for r in finished)
    assert all(r.parent_task_run_id for r in shards)  # shown under their parent runs
    merged = json.loads((run_dir / "results.json").read_text())
    assert merged["totals"]["judge_calls"] > 0  # the shards paid for the verdicts

    # 3. the same run in one process: the same counts, and no judge call paid again
    single = asyncio.run(_run(api_url, {**common, "output_dir": str(tmp_path / "single")}))
    assert single.state.is_completed(), single.state.message
    alone = _results(tmp_path / "single")
    assert _counts(merged) == _counts(alone)
    assert merged["runs_per_case"] == alone["runs_per_case"] == 3
    # whichever worker ran it, its own PREFECT_HOME held at most the verdicts of the shards
    # it ran: 0 calls means the bucket answered them all
    assert alone["totals"]["judge_calls"] == 0
    assert alone["totals"]["judge_cache_hits"] > 0

    # 4. a paired, adaptive run split into shards on the same workers: each shard runs
    # both agents on its cases and hands both sides and its waves back through the bucket
    paired = {
        **common,
        "against": common["agent"],
        "until_decided": True,
        "max_trials": 60,
        "shards": 2,
        "output_dir": str(tmp_path / "paired"),
    }
    both = asyncio.run(_run(api_url, paired))
    assert both.state.is_completed(), both.state.message + "\n".join(
        log.read_text()[-2000:] for log in worker_logs
    )
    (paired_dir,) = [p.parent for p in (tmp_path / "paired").glob("*/*/shards")]
    candidate = json.loads((paired_dir / "results.json").read_text())
    baseline = json.loads((paired_dir / "against" / "results.json").read_text())
    cases = alone["totals"]["cases"]
    # the first round is 3 pairs a case; the waves add pairs within the shards' budget
    assert candidate["totals"]["trials"] == baseline["totals"]["trials"] >= 3 * cases
    comparison = json.loads((paired_dir / "comparison.json").read_text())["comparison"]
    summary = comparison["sequential"]
    assert comparison["pairing"] == "paired" and summary["trials"] <= 60
    assert sorted(c["case_id"] for c in summary["cases"]) == sorted(
        alone_case["case_id"] for alone_case in alone["cases"]
    )
    assert summary["counts"]["regressed"] == 0  # the same agent on both sides
    paired_shards = asyncio.run(_shard_runs(api_url, tmp_path / "paired"))
    assert len(paired_shards) == 2 and all(r.state.is_completed() for r in paired_shards)
