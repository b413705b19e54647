"""prefect.yaml's deployments on a real Prefect server with a real process worker: runs
started by hand and from CI, runs triggered by deploy events (full, and with only the
agent named), the nightly schedule, the events a run emits (and an automation reacting
to one), and a deploy refused for a project folder that does not exist.

The project is deployed from a copy of its deployable files, so runs with the default
output folder write into that copy, not into the repository. The server is the session's
(tests/e2e/conftest.py): the copy deploys to a work pool of its own, and each test reads
back its own flow runs and events."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from uuid import UUID

import pytest
from prefect.client.orchestration import PrefectClient
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterDeploymentId

from tests.support.otlp_traces import AgentTrace, export_request, write_s3_layout
from tests.support.prefect_server import (
    PREFECT,
    PrefectServer,
    deployable_copy,
    free_port,
    prefect_cli,
    prefect_env,
    process_worker,
    server_events,
    start_next_scheduled_run,
)

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
POOL = "e2e-deployments"
WEATHER = "examples/weather"


@pytest.fixture(scope="module")
def deployed(tmp_path_factory, shared_prefect: PrefectServer):
    home = tmp_path_factory.mktemp("prefect-home")
    project = deployable_copy(tmp_path_factory.mktemp("deploy") / "project", POOL)
    api_url = shared_prefect.api_url
    prefect_cli(home, api_url, "work-pool", "create", POOL, "--type", "process", cwd=project)
    # no AGENTFLOW_EVAL_PROJECT_DIR: the folder `prefect deploy` runs in is the default
    os.environ.pop("AGENTFLOW_EVAL_PROJECT_DIR", None)
    prefect_cli(home, api_url, "deploy", "--all", cwd=project)
    with process_worker(home, api_url, POOL, project) as worker_log:
        yield home, api_url, worker_log, project


async def _wait_for_runs(
    api_url: str, deployment: str, count: int, timeout_s: float = 240, where=lambda run: True
):
    """The finished runs of ``deployment`` matching ``where``, once there are ``count``."""
    async with PrefectClient(api=api_url) as client:
        target = await client.read_deployment_by_name(f"evaluate/{deployment}")
        of_deployment = FlowRunFilter(deployment_id=FlowRunFilterDeploymentId(any_=[target.id]))
        for _ in range(int(timeout_s / 2)):
            runs = await client.read_flow_runs(flow_run_filter=of_deployment)
            finished = [r for r in runs if r.state and r.state.is_final() and where(r)]
            if len(finished) >= count:
                return sorted(finished, key=lambda r: r.created)
            await asyncio.sleep(2)
    raise AssertionError(f"no {count} finished runs of {deployment} within {timeout_s}s")


def _of_run(event, flow_run_id: UUID) -> bool:
    """Whether ``event`` is about the flow run ``flow_run_id`` (a related resource)."""
    return any(r.id == f"prefect.flow-run.{flow_run_id}" for r in event.related)


def _results(output_dir: Path) -> dict:
    (path,) = output_dir.glob("*/*/results.json")
    return json.loads(path.read_text())


def _emit(home: Path, api_url: str, cwd: Path, resource: dict, payload: dict | None = None):
    args = ["event", "emit", "agentflow.agent.deployed", "--resource", json.dumps(resource)]
    if payload is not None:
        args += ["--payload", json.dumps(payload)]
    prefect_cli(home, api_url, *args, cwd=cwd)


def test_a_run_started_by_hand_evaluates_and_writes_results(deployed, tmp_path):
    home, api_url, worker_log, project = deployed
    out = tmp_path / "adhoc"
    prefect_cli(
        home,
        api_url,
        "deployment",
        "run",
        "evaluate/adhoc",
        "--param",
        "runs=2",
        "--param",
        f"output_dir={out}",
        "--param",
        'labels={"env": "staging"}',
        cwd=project,
    )
    (run,) = asyncio.run(
        _wait_for_runs(
            api_url, "adhoc", 1, where=lambda r: r.parameters.get("output_dir") == str(out)
        )
    )
    assert run.state.is_completed(), worker_log.read_text()[-3000:]
    results = _results(out)
    assert results["totals"]["trials"] == 4
    assert results["runs_per_case"] == 2
    assert results["labels"] == {"env": "staging"}
    # nothing published: the summary says where the report is on the worker
    summary = asyncio.run(_summary(api_url, run.id))
    assert str(out) in summary and "report.html" in summary


async def _summary(api_url: str, flow_run_id: UUID) -> str:
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    async with PrefectClient(api=api_url) as client:
        artifacts = await client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
        )
    (summary,) = [a for a in artifacts if a.type == "markdown"]
    return str(summary.data)


def test_a_deploy_event_with_only_the_agent_named_runs_on_the_defaults(deployed, tmp_path):
    home, api_url, worker_log, project = deployed
    # a module inside the deployment's allowed_agents (examples)
    module = f"v2_agent_{tmp_path.name.replace('-', '_')}"
    agent_file = project / "examples" / f"{module}.py"
    agent_file.write_text("def agent(message):\n    return 'It is sunny in New York, 72°F.'\n")
    _emit(
        home,
        api_url,
        project,
        {
            "prefect.resource.id": "agentflow.agent.weather",
            "agentflow.agent.spec": f"examples.{module}:agent",
        },
    )
    (run,) = asyncio.run(
        _wait_for_runs(
            api_url, "on-agent-deployed", 1, where=lambda r: module in r.parameters["agent"]
        )
    )
    assert run.state.is_completed(), worker_log.read_text()[-3000:]
    assert run.parameters["agent"] == f"examples.{module}:agent"
    results = _results(project / "eval-results")  # the deployment's default output folder
    assert results["agent"] == "agent"
    assert results["totals"]["trials"] == 10  # the config's runs: 5 × 2 cases
    assert results["agent_version"] is None and results["labels"] == {}


def test_a_deploy_event_naming_no_agent_or_one_outside_the_allow_list_fails(deployed, tmp_path):
    home, api_url, worker_log, project = deployed
    outside = tmp_path / "evil_agent.py"
    outside.write_text("def agent(message):\n    return 'rain'\n")
    unnamed, refused = tmp_path / "unnamed", tmp_path / "refused"
    _emit(
        home,
        api_url,
        project,
        {"prefect.resource.id": "agentflow.agent.x"},
        {"output_dir": str(unnamed)},
    )
    _emit(
        home,
        api_url,
        project,
        {"prefect.resource.id": "agentflow.agent.x", "agentflow.agent.spec": f"{outside}:agent"},
        {"output_dir": str(refused)},
    )
    runs = asyncio.run(
        _wait_for_runs(
            api_url,
            "on-agent-deployed",
            2,
            where=lambda r: r.parameters.get("output_dir") in (str(unnamed), str(refused)),
        )
    )
    by_output = {run.parameters["output_dir"]: run for run in runs}
    for run in runs:
        assert run.state.is_failed(), worker_log.read_text()[-3000:]
    assert by_output[str(unnamed)].parameters["agent"] == ""
    assert "no agent was named" in by_output[str(unnamed)].state.message
    assert "an agent file is not allowed" in by_output[str(refused)].state.message
    assert not unnamed.exists() and not refused.exists()  # refused before anything ran


def test_a_deploy_event_sets_runs_identity_and_output(deployed, tmp_path):
    home, api_url, worker_log, _ = deployed
    out = tmp_path / "on-deploy"
    _emit(
        home,
        api_url,
        ROOT,
        {
            "prefect.resource.id": "agentflow.agent.weather",
            "agentflow.agent.spec": "examples.weather.agent:agent",
            "agentflow.agent.version": "2.4.1",
        },
        {
            "evalset": f"{WEATHER}/weather.evalset.json",
            "config": f"{WEATHER}/eval_config.json",
            "runs": 1,
            "git_sha": "0123456789abcdef0123456789abcdef01234567",
            "labels": {"env": "staging", "team": "support"},
            "output_dir": str(out),
        },
    )
    (run,) = asyncio.run(
        _wait_for_runs(
            api_url,
            "on-agent-deployed",
            1,
            where=lambda r: r.parameters.get("output_dir") == str(out),
        )
    )
    assert run.state.is_completed(), worker_log.read_text()[-3000:]
    results = _results(out)
    assert results["totals"]["trials"] == 2
    assert results["agent_version"] == "2.4.1"
    assert results["git_sha"] == "0123456789abcdef0123456789abcdef01234567"
    assert results["labels"] == {"env": "staging", "team": "support"}
    (junit,) = out.glob("*/*/junit.xml")
    assert 'name="agent_version" value="2.4.1"' in junit.read_text()
    # as Markdown: a leading "2." is escaped, since run data may start a line
    assert "version 2\\.4.1" in asyncio.run(_summary(api_url, run.id))
    # the outcome is an event automations can use
    mine = asyncio.run(
        server_events(
            api_url,
            "agentflow.eval.completed",
            where=lambda e: _of_run(e, run.id) and e.payload.get("agent_version") == "2.4.1",
        )
    )
    assert mine[0].payload["trials"] == 2
    assert 0.0 <= mine[0].payload["pass_rate"] <= 1.0
    assert mine[0].payload["report_url"].endswith("/report.html")
    assert mine[0].resource.id == "agentflow.eval-set.weather_agent_basic_tests"


def test_ci_starts_a_run_gets_its_id_and_waits_for_it(deployed, tmp_path):
    _, api_url, worker_log, _ = deployed
    out = tmp_path / "from-ci"
    script = ROOT / "deployments" / "ci" / "run_evaluation.py"
    params = {"agent": "examples.weather.agent:agent", "runs": 1, "output_dir": str(out)}
    result = subprocess.run(
        [sys.executable, str(script), "evaluate/adhoc", json.dumps(params)],
        env={"PATH": os.environ["PATH"], "PREFECT_API_URL": api_url},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr + worker_log.read_text()[-2000:]
    first = result.stdout.splitlines()[0]
    run_id = UUID(first.split()[2])
    assert "Completed" in result.stdout.splitlines()[-1]

    async def read() -> object:
        async with PrefectClient(api=api_url) as client:
            return await client.read_flow_run(run_id)

    run = asyncio.run(read())
    assert run.state.is_completed() and run.parameters["runs"] == 1
    assert _results(out)["totals"]["trials"] == 2


def test_a_failed_publish_is_in_the_summary_and_an_event_an_automation_reacts_to(
    deployed, tmp_path
):
    home, api_url, worker_log, project = deployed

    async def automation() -> UUID:
        from prefect.automations import AutomationCore, DoNothing, EventTrigger

        async with PrefectClient(api=api_url) as client:
            return await client.create_automation(
                AutomationCore(
                    name="tell-the-team-publish-failed",
                    trigger=EventTrigger(
                        expect={"agentflow.eval.publish-failed"}, posture="Reactive", threshold=1
                    ),
                    actions=[DoNothing()],
                )
            )

    automation_id = asyncio.run(automation())
    out = tmp_path / "store-down"
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    s3 = {"endpoint_url": down, "path_style": True, "report_links": "endpoint"}
    prefect_cli(
        home,
        api_url,
        "deployment",
        "run",
        "evaluate/adhoc",
        "--param",
        "runs=1",
        "--param",
        f"output_dir={out}",
        "--param",
        "publish_to=s3://reports/nightly",
        "--param",
        f"s3={json.dumps(s3)}",
        cwd=project,
        AWS_ACCESS_KEY_ID="k",
        AWS_SECRET_ACCESS_KEY="s",
    )
    (run,) = asyncio.run(
        _wait_for_runs(
            api_url, "adhoc", 1, 300, where=lambda r: r.parameters.get("output_dir") == str(out)
        )
    )
    assert run.state.is_completed(), worker_log.read_text()[-3000:]  # the results exist
    summary = asyncio.run(_summary(api_url, run.id))
    assert "Report not published" in summary and "agentflow-eval publish" in summary
    (failed,) = asyncio.run(
        server_events(api_url, "agentflow.eval.publish-failed", where=lambda e: _of_run(e, run.id))
    )
    assert failed.payload["target"] == "s3://reports/nightly"
    assert str(out) in failed.payload["run_dir"]
    assert any(r.id == f"prefect.flow-run.{run.id}" for r in failed.related)
    fired = asyncio.run(
        server_events(
            api_url,
            "prefect.automation.triggered",
            where=lambda e: e.resource.id == f"prefect.automation.{automation_id}",
        )
    )
    assert fired


def test_the_nightly_deployment_is_scheduled(deployed):
    _, api_url, _, _ = deployed

    async def scheduled():
        async with PrefectClient(api=api_url) as client:
            deployment = await client.read_deployment_by_name("regression/nightly")
            crons = [s.schedule.cron for s in deployment.schedules]
            of_deployment = FlowRunFilter(
                deployment_id=FlowRunFilterDeploymentId(any_=[deployment.id])
            )
            for _ in range(30):
                runs = [
                    r
                    for r in await client.read_flow_runs(flow_run_filter=of_deployment)
                    if r.state_name == "Scheduled"
                ]
                if runs:
                    return crons, runs
                await asyncio.sleep(1)
            return crons, []

    crons, runs = asyncio.run(scheduled())
    assert crons == ["0 3 * * *"]
    assert runs and all(r.expected_start_time.hour == 3 for r in runs)

    async def limit():
        async with PrefectClient(api=api_url) as client:
            return (
                await client.read_deployment_by_name("regression/nightly")
            ).global_concurrency_limit

    # a nightly started by hand waits for the scheduled one instead of racing it
    nightly_limit = asyncio.run(limit())
    assert nightly_limit is not None and nightly_limit.limit == 1


def test_deploying_with_a_project_folder_that_does_not_exist_is_refused(deployed, tmp_path):
    home, api_url, _, project = deployed
    missing = tmp_path / "not-there"
    result = subprocess.run(
        [*PREFECT, "--no-prompt", "deploy", "--all"],
        env={**prefect_env(home, api_url), "AGENTFLOW_EVAL_PROJECT_DIR": str(missing)},
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    assert f"project folder {missing} does not exist" in result.stdout + result.stderr


async def _traces_runs(api_url: str, count: int, where, timeout_s: float = 300):
    """The finished runs of evaluate-traces/production matching ``where``, once there are
    ``count``."""
    async with PrefectClient(api=api_url) as client:
        target = await client.read_deployment_by_name("evaluate-traces/production")
        of_deployment = FlowRunFilter(deployment_id=FlowRunFilterDeploymentId(any_=[target.id]))
        for _ in range(int(timeout_s / 2)):
            runs = await client.read_flow_runs(flow_run_filter=of_deployment)
            finished = [r for r in runs if r.state and r.state.is_final() and where(r)]
            if len(finished) >= count:
                return sorted(finished, key=lambda r: r.created)
            await asyncio.sleep(2)
    raise AssertionError(f"no {count} finished runs of evaluate-traces/production")


def _land_traces(source: Path, names: list[str]) -> None:
    start = len(list(source.rglob("*.json"))) if source.exists() else 0
    traces = [AgentTrace(name, tool=None) for name in names]
    write_s3_layout(source, [export_request([trace]) for trace in traces], start=start)


def _trials(out: Path) -> int:
    return sum(
        json.loads(path.read_text())["totals"]["trials"]
        for path in out.glob("traces-*/*/results.json")
    )


def test_production_traces_are_scored_on_schedule_and_when_new_ones_land(deployed, tmp_path):
    home, api_url, worker_log, project = deployed

    scheduled_id = asyncio.run(start_next_scheduled_run(api_url, "evaluate-traces/production", 900))
    (run,) = asyncio.run(_traces_runs(api_url, 1, where=lambda r: r.id == scheduled_id))
    assert run.state.is_completed(), worker_log.read_text()[-3000:]
    shipped = project / "eval-results" / "production"
    assert _trials(shipped) == 12  # the example's traces, both versions
    assert (shipped / "failures.evalset.json").is_file()

    # traces land elsewhere: each landed event scores what no run read before
    source, out = tmp_path / "landed", tmp_path / "scores"
    payload = {"source": str(source), "output_dir": str(out)}

    def land(names: list[str], count: int) -> None:
        _land_traces(source, names)
        args = ["event", "emit", "agentflow.traces.landed", "--resource",
                json.dumps({"prefect.resource.id": "agentflow.traces.landed-bucket"}),
                "--payload", json.dumps(payload)]  # fmt: skip
        prefect_cli(home, api_url, *args, cwd=project)
        runs = asyncio.run(
            _traces_runs(api_url, count, where=lambda r: r.parameters["source"] == str(source))
        )
        assert all(r.state.is_completed() for r in runs), worker_log.read_text()[-3000:]

    land(["first-0", "first-1", "first-2"], 1)
    assert _trials(out) == 3
    land(["second-0", "second-1"], 2)
    assert _trials(out) == 5  # the second run scored the two new ones alone
    assert len(list(out.glob("traces-*/*/results.json"))) == 2
