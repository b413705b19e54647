"""Production as an eval set, end to end (issue 34): a real agent's traces in a real
bucket, scored by the ``evaluate-traces/production`` deployment on a real Prefect server
with a real process worker.

A Pydantic AI weather agent, instrumented with the OpenTelemetry SDK and answering from a
scripted OpenAI-compatible model, serves two versions: 1.0.0 looks the weather up for
every question; 2.0.0 (the planted drop) answers most questions without looking. Its
spans are written in the layout the Collector's S3 exporter writes (OTLP JSON, one
export an object under minute partitions) and uploaded under ``s3://<bucket>/otel`` on
SeaweedFS. The deployment is pointed at that prefix as docs/traces.md and the deployment
guide teach (results and cursor published to another bucket, credentials in a Prefect
Secret block). A scheduled run scores version 1.0.0's traces; then 2.0.0's land, an
``agentflow.traces.landed`` event starts a run that scores only those, finds the drop
from the window scored before (an ``agentflow.eval.regressed`` event on the server), and
adds the failing traces as candidate cases, which ``eval-set validate`` accepts and a
normal ``agentflow-eval run`` re-runs."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common")
pytest.importorskip("pydantic_ai")

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from prefect.client.orchestration import PrefectClient
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterDeploymentId
from prefect.client.schemas.objects import FlowRun

from agentflow_eval.files.loading import load_evalset
from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from tests.frameworks.test_otel import pydantic_weather_agent, weather_model
from tests.support.collector_exporter import CollectorLayoutExporter
from tests.support.prefect_server import (
    PrefectServer,
    deployable_copy,
    prefect_cli,
    prefect_env,
    process_worker,
    server_events,
    start_next_scheduled_run,
)
from tests.support.seaweed import SeaweedFS

pytestmark = pytest.mark.e2e

POOL = "e2e-production-traces"
TRACES = "agentflow-e2e-prod-traces"
RESULTS = "agentflow-e2e-prod-results"
SOURCE = f"s3://{TRACES}/otel"
PUBLISH_TO = f"s3://{RESULTS}/production"
SECRET = "e2e-production-traces-s3"
DEPLOYMENT = "evaluate-traces/production"
EVAL_SET_ID = "traces-otel"

CONFIG = {"criteria": {"calls_tool": {"name": "get_weather"}}}
"""Reference-free: the agent looked the weather up."""
QUESTIONS = [
    "What's the weather in Tokyo?",
    "Is it raining in Paris?",
    "Weather in London today?",
    "Should I take an umbrella in London?",
]
V1, V2 = "1.0.0", "2.0.0"


def careless_model(body: dict[str, Any]) -> Reply:
    """Version 2.0.0's model: it answers from memory unless asked about Tokyo (the drop)."""
    asked = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    if body["messages"][-1]["role"] == "user" and "Tokyo" not in json.dumps(asked):
        return Reply.text("It is probably sunny.")
    return weather_model(body)


def _agent_traces(version: str, model: Callable[[dict[str, Any]], Reply], folder: Path) -> None:
    """Run the instrumented agent as ``version`` on each question twice; its traces are
    written under ``folder`` as the Collector's S3 exporter lays them out."""
    exporter = CollectorLayoutExporter(folder)
    resource = Resource.create({"service.name": "weather-agent", "service.version": version})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    async def serve() -> None:
        with ScriptedOpenAIServer(handler=model) as server:
            agent = pydantic_weather_agent(server.url, tracer_provider=provider)
            for question in QUESTIONS * 2:
                await agent(question, [])

    asyncio.run(serve())
    provider.shutdown()
    assert len(exporter.written) == 2 * len(QUESTIONS)


def _upload(seaweed: SeaweedFS, folder: Path) -> int:
    """Upload the objects under ``folder`` to ``SOURCE`` at the same keys."""
    client = seaweed.client()
    paths = sorted(p for p in folder.rglob("*.json") if p.is_file())
    for path in paths:
        key = f"otel/{path.relative_to(folder).as_posix()}"
        client.put_object(Bucket=TRACES, Key=key, Body=path.read_bytes())
    return len(paths)


def _point_at_the_bucket(project: Path, seaweed: SeaweedFS, out: Path, candidates: Path) -> None:
    """Set the production deployment's parameters to the bucket, as the deployment guide
    shows (source, config, publish_to, s3 with a credentials Secret block)."""
    config = project / "production_config.json"
    config.write_text(json.dumps(CONFIG))
    prefect_yaml = project / "prefect.yaml"
    text = prefect_yaml.read_text(encoding="utf-8")
    shipped = (
        "      source: examples/traces/otel\n"
        "      config: examples/traces/traces_config.json\n"
        "      sample_rate: 1.0\n"
        "      strata: [tenant]\n"
        "      output_dir: eval-results/production\n"
        "      candidates_to: eval-results/production/failures.evalset.json\n"
    )
    ours = (
        f"      source: {SOURCE}\n"
        f"      config: {config}\n"
        f"      publish_to: {PUBLISH_TO}\n"
        "      s3:\n"
        f"        endpoint_url: {seaweed.endpoint_url}\n"
        f"        region: {seaweed.region}\n"
        "        path_style: true\n"
        f"        credentials_secret: {SECRET}\n"
        "      sample_rate: 1.0\n"
        f"      output_dir: {out}\n"
        f"      candidates_to: {candidates}\n"
    )
    assert text.count(shipped) == 1, "prefect.yaml's production deployment changed"
    prefect_yaml.write_text(text.replace(shipped, ours), encoding="utf-8")


@pytest.fixture(scope="module")
def production(
    tmp_path_factory: pytest.TempPathFactory,
    shared_prefect: PrefectServer,
    shared_seaweed: SeaweedFS,
) -> Iterator[dict[str, Any]]:
    client = shared_seaweed.client()
    for bucket in (TRACES, RESULTS):
        client.create_bucket(Bucket=bucket)
    root = tmp_path_factory.mktemp("production")
    home, api_url = root / "prefect-home", shared_prefect.api_url
    home.mkdir()
    out, candidates = root / "scores", root / "failures.evalset.json"
    project = deployable_copy(root / "project", POOL)
    _point_at_the_bucket(project, shared_seaweed, out, candidates)
    secret = {
        "aws_access_key_id": shared_seaweed.access_key,
        "aws_secret_access_key": shared_seaweed.secret_key,
    }
    save_secret = (
        "import json, sys\nfrom prefect.blocks.system import Secret\n"
        "Secret(value=json.loads(sys.argv[2])).save(sys.argv[1], overwrite=True)\n"
    )
    subprocess.run(
        [sys.executable, "-c", save_secret, SECRET, json.dumps(secret)],
        env=prefect_env(home, api_url),
        check=True,
        timeout=120,
    )
    prefect_cli(home, api_url, "work-pool", "create", POOL, "--type", "process", cwd=project)
    prefect_cli(home, api_url, "deploy", "--name", DEPLOYMENT, cwd=project)
    with process_worker(home, api_url, POOL, project) as worker_log:
        yield {
            "home": home,
            "api_url": api_url,
            "project": project,
            "worker_log": worker_log,
            "out": out,
            "candidates": candidates,
            "config": project / "production_config.json",
            "root": root,
        }


async def _finished_runs(
    api_url: str, where: Callable[[FlowRun], bool], count: int, timeout_s: float = 420
) -> list[FlowRun]:
    """The finished runs of the deployment matching ``where``, once there are ``count``."""
    async with PrefectClient(api=api_url) as client:
        target = await client.read_deployment_by_name(DEPLOYMENT)
        of_deployment = FlowRunFilter(deployment_id=FlowRunFilterDeploymentId(any_=[target.id]))
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            runs = await client.read_flow_runs(flow_run_filter=of_deployment)
            finished = [r for r in runs if r.state and r.state.is_final() and where(r)]
            if len(finished) >= count:
                return sorted(finished, key=lambda r: r.created or 0)
            await asyncio.sleep(2)
    raise AssertionError(f"no {count} finished runs of {DEPLOYMENT} within {timeout_s}s")


def _runs_by_version(out: Path) -> dict[str, dict[str, Any]]:
    runs = [json.loads(p.read_text()) for p in out.glob(f"{EVAL_SET_ID}/*/results.json")]
    by_version = {run["agent_version"]: run for run in runs}
    assert len(by_version) == len(runs), "a version scored twice"
    return by_version


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentflow_eval.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_production_traces_in_a_bucket_become_scores_a_regression_and_cases(
    production: dict[str, Any], shared_seaweed: SeaweedFS
) -> None:
    home, api_url, project = production["home"], production["api_url"], production["project"]
    worker_log: Path = production["worker_log"]
    out: Path = production["out"]
    root: Path = production["root"]

    def log_tail() -> str:
        return worker_log.read_text(errors="replace")[-4000:]

    # version 1.0.0 serves production; its traces land in the bucket
    _agent_traces(V1, weather_model, root / "collector-v1")
    assert _upload(shared_seaweed, root / "collector-v1") == 8

    # the schedule scores them
    scheduled_id = asyncio.run(start_next_scheduled_run(api_url, DEPLOYMENT, 900))
    (scheduled,) = asyncio.run(_finished_runs(api_url, lambda r: r.id == scheduled_id, 1))
    assert scheduled.state is not None and scheduled.state.is_completed(), log_tail()
    first = _runs_by_version(out)
    assert list(first) == [V1]
    assert (first[V1]["totals"]["trials"], first[V1]["totals"]["passed"]) == (8, 8)

    # version 2.0.0 is rolled out; its traces land, and the landed event starts a run
    _agent_traces(V2, careless_model, root / "collector-v2")
    assert _upload(shared_seaweed, root / "collector-v2") == 8
    listed = shared_seaweed.client().list_objects_v2(Bucket=TRACES, Prefix="otel/")
    assert listed["KeyCount"] == 16  # new objects beside the old, as the exporter adds them
    payload = {
        "source": SOURCE,
        "config": str(production["config"]),
        "output_dir": str(out),
        "candidates_to": str(production["candidates"]),
    }
    resource = {"prefect.resource.id": f"agentflow.traces.{TRACES}"}
    prefect_cli(home, api_url, "event", "emit", "agentflow.traces.landed",
                "--resource", json.dumps(resource), "--payload", json.dumps(payload),
                cwd=project)  # fmt: skip
    (landed,) = asyncio.run(
        _finished_runs(
            api_url,
            lambda r: (
                r.id != scheduled_id
                and not r.auto_scheduled
                and r.parameters.get("output_dir") == str(out)
            ),  # not another module's
            1,
        )
    )
    assert landed.state is not None and landed.state.is_completed(), log_tail()

    # the event-started run scored the new traces alone (the cursor)
    scored = _runs_by_version(out)
    assert sorted(scored) == [V1, V2]
    assert scored[V1] == first[V1]
    v2 = scored[V2]
    assert (v2["totals"]["trials"], v2["totals"]["passed"]) == (8, 2)
    assert v2["labels"]["traces_seen"] == "8"
    assert first[V1]["labels"]["traces_batch"] == f"flow-run-{scheduled.id}"
    assert v2["labels"]["traces_batch"] == f"flow-run-{landed.id}"
    results_bucket = shared_seaweed.client()
    markers = results_bucket.list_objects_v2(Bucket=RESULTS, Prefix="production/traces-cursor/")
    assert markers["KeyCount"] == 16  # each object claimed once
    published = results_bucket.get_object(Bucket=RESULTS, Key=f"production/{EVAL_SET_ID}/runs.json")
    runs = json.loads(published["Body"].read())["runs"]
    assert sorted(run["agent_version"] for run in runs) == [V1, V2]

    # the drop from the window scored before is a regression event on the server
    (regressed,) = asyncio.run(
        server_events(
            api_url,
            "agentflow.eval.regressed",
            where=lambda e: (
                e.payload.get("agent_version") == V2 and e.payload.get("eval_set_id") == EVAL_SET_ID
            ),
            timeout_s=120,
        )
    )
    assert regressed.payload["baseline_run_id"] == first[V1]["run_id"]
    assert regressed.payload["pass_rate_before"] == 1.0
    assert regressed.payload["pass_rate_after"] == 0.25

    # the failing traces are candidate cases: valid, and a normal run re-runs them
    candidates: Path = production["candidates"]
    cases = load_evalset(candidates).eval_set.eval_cases
    assert len(cases) == 6
    assert {c.metadata["agent_version"] for c in cases} == {V2}
    asked = sorted(c.conversation[0].user_content.text for c in cases)
    assert asked == sorted(q for q in QUESTIONS * 2 if "Tokyo" not in q)
    config = str(production["config"])
    validated = _cli("eval-set", "validate", str(candidates), "--config", config, cwd=root)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "6 cases" in validated.stdout
    (root / "fixed_agent.py").write_text("def agent(message):\n    return 'Let me check.'\n")
    rerun_out = root / "rerun"
    rerun = _cli("run", "fixed_agent.py:agent", str(candidates), "--config", config,
                 "--runs", "1", "--no-prefect", "--quiet", "--output", str(rerun_out),
                 cwd=root)  # fmt: skip
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr  # report-only: no gate set
    (results_path,) = rerun_out.glob("*/*/results.json")
    results = json.loads(results_path.read_text())
    assert results["totals"]["trials"] == 6
    assert results["totals"]["passed"] == 0  # the agent still does not look it up
