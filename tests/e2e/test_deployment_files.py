"""The deployment files other than prefect.yaml: the remote-worker variant (its pull steps
run for real against a local git repository) and the Docker work-pool example (its YAML,
entrypoint and parameters; there is no Docker engine to build with here)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from prefect.deployments.steps.core import run_steps
from prefect.testing.utilities import prefect_test_harness
from prefect.utilities.importtools import import_object
from prefect.utilities.templating import apply_values

from agentflow_eval.models.regression import RegressionParams
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.review_params import REVIEW_DEPLOYMENT, ReviewParams
from agentflow_eval.models.traces_request import TracesRequest

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
FILES = [ROOT / "prefect.yaml", *sorted((ROOT / "deployments").glob("*/prefect.yaml"))]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_deployment_names_a_real_flow_and_valid_parameters(path: Path) -> None:
    document = yaml.safe_load(path.read_text())
    assert document["deployments"]
    for deployment in document["deployments"]:
        entrypoint = deployment["entrypoint"]
        flow_name = entrypoint.rpartition(":")[2]
        if ".py:" in entrypoint:
            assert (ROOT / entrypoint.split(":")[0]).is_file()
            path = entrypoint.split(":")[0]
            installed = f"agentflow_eval.flows.{Path(path).stem}:{flow_name}"
            assert import_object(installed).name.replace("-", "_") == flow_name
        else:
            assert import_object(entrypoint).name.replace("-", "_") == flow_name
        if flow_name == "review":  # the run to review is what the form asks for
            ReviewParams.model_validate({"run": "eval-results/x", **deployment["parameters"]})
            continue
        model = {
            "evaluate": RunRequest,
            "regression": RegressionParams,
            "evaluate_traces": TracesRequest,
        }[flow_name]
        model.model_validate(deployment["parameters"])


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_deploy_installs_the_crash_automation_with_a_wait_it_can_set(path: Path) -> None:
    """Whichever file a team deploys with, its lost workers' runs end Crashed (the step
    itself runs in tests/flows/test_deploy_automations.py)."""
    document = yaml.safe_load(path.read_text())
    (step,) = [
        build["agentflow_eval.flows.support.deploy_steps.ensure_automations"]
        for build in document.get("build") or []
        if "agentflow_eval.flows.support.deploy_steps.ensure_automations" in build
    ]
    assert step["files"] == ["deployments/automations/crash-unresponsive-runs.yaml"]
    assert all((ROOT / name).is_file() for name in step["files"])
    assert step["unresponsive_after_s"] == "{{ $AGENTFLOW_EVAL_UNRESPONSIVE_AFTER_S }}"


def test_the_nightly_suite_runs_each_eval_set_as_an_evaluate_deployment_run() -> None:
    """The nightly regression deployment's eval sets exist, and the evaluate deployment
    it starts them as is declared in the same file (else they would run in-process)."""
    document = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    by_name = {(d["entrypoint"].rpartition(":")[2], d["name"]): d for d in document["deployments"]}
    nightly = by_name["regression", "nightly"]
    params = RegressionParams.model_validate(nightly["parameters"])
    flow_name, _, deployment_name = params.evaluate_deployment.partition("/")
    assert (flow_name, deployment_name) in by_name
    assert len(params.evals) >= 2 and params.baseline == "latest" and params.publish_to
    for entry in params.evals:
        assert (ROOT / entry.evalset).is_file(), entry.evalset
        import_object(entry.agent)
    assert [s["cron"] for s in nightly["schedules"]] == ["0 3 * * *"]
    # its own queue: suite runs waiting on their evaluate runs never hold every slot
    assert (
        nightly["work_pool"]["work_queue_name"]
        != by_name["evaluate", "adhoc"]["work_pool"]["work_queue_name"]
    )


def test_the_review_a_run_asks_for_is_declared_on_a_queue_of_its_own() -> None:
    """A run given review_sample starts this deployment; its flow runs wait for people,
    so they never hold the slots of the evaluate runs."""
    document = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    by_name = {(d["entrypoint"].rpartition(":")[2], d["name"]): d for d in document["deployments"]}
    flow_name, _, name = REVIEW_DEPLOYMENT.partition("/")
    queues = {d["work_pool"]["work_queue_name"] for d in document["deployments"]}
    review = by_name[flow_name, name]
    assert review["entrypoint"] == "flows/review.py:review"
    assert review["work_pool"]["work_queue_name"] == "reviews"
    assert len(queues) == 3  # default (evaluate), suites, reviews


def test_the_docker_image_is_built_from_files_a_repository_has() -> None:
    dockerfile = (ROOT / "deployments/docker/Dockerfile").read_text()
    assert "agentflow-eval[s3]" in dockerfile and "requirements.txt" in dockerfile
    document = yaml.safe_load((ROOT / "deployments/docker/prefect.yaml").read_text())
    (step,) = [
        build["prefect_docker.deployments.steps.build_docker_image"]
        for build in document["build"]
        if "prefect_docker.deployments.steps.build_docker_image" in build
    ]
    assert step["dockerfile"] == "deployments/docker/Dockerfile"
    assert document["deployments"][0]["work_pool"]["job_variables"]["image"]


def _git(*args: str, cwd: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def test_the_remote_pull_steps_clone_the_repository_and_install_its_requirements(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evals = tmp_path / "agent-evals"
    (evals / "agents").mkdir(parents=True)
    (evals / "agents" / "weather.py").write_text("def agent(message):\n    return 'sunny'\n")
    (evals / "requirements.txt").write_text("pyyaml\n")  # installed already: no download
    _git("init", "-q", "-b", "main", cwd=evals)
    _git("add", ".", cwd=evals)
    _git("commit", "-q", "-m", "agents", cwd=evals)
    bare = tmp_path / "agent-evals.git"
    _git("clone", "-q", "--bare", str(evals), str(bare), cwd=tmp_path)

    document = yaml.safe_load((ROOT / "deployments/remote/prefect.yaml").read_text())
    monkeypatch.setenv("AGENTFLOW_EVAL_REPO", bare.as_uri())  # as `prefect deploy` reads it
    steps = apply_values(document["pull"], dict(os.environ), remove_notset=False)
    worker_dir = tmp_path / "worker"
    worker_dir.mkdir()
    monkeypatch.chdir(worker_dir)
    with prefect_test_harness(server_startup_timeout=120):  # the steps talk to an API
        outputs = asyncio.run(run_steps(steps))
    clone = worker_dir / outputs["directory"]  # relative to the folder the run started in
    assert clone.is_dir()
    assert (clone / "agents" / "weather.py").read_text().startswith("def agent")


def test_production_traces_are_scored_on_a_schedule_and_when_they_land() -> None:
    """The traces deployment reads a source that exists with a config it accepts, every
    fifteen minutes and on the landed event, and its event run reads the event's source."""
    document = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    (production,) = [d for d in document["deployments"] if d["name"] == "production"]
    params = TracesRequest.model_validate(production["parameters"])
    assert (ROOT / params.source).is_dir() and (ROOT / params.config).is_file()
    assert [s["interval"] for s in production["schedules"]] == [900]
    (trigger,) = production["triggers"]
    assert trigger["expect"] == ["agentflow.traces.landed"]
    rendered = apply_values(
        trigger["parameters"], {}, remove_notset=False
    )  # the event's template is Prefect's, rendered by the automation
    assert "event.payload.source" in rendered["source"]
