"""The nightly regression suite on a real Prefect server with two process workers, each
with its own PREFECT_HOME (as two machines would have), deployed from prefect.yaml:

- the regression deployment starts one flow run of evaluate/adhoc per eval set, and the
  two workers each run one (a suite run has its own queue: worker ``a`` serves every
  queue with two slots, worker ``b`` only the evaluate queue with one, so once ``a``
  holds the suite run, each takes one evaluate run);
- a first night compares with nothing and completes; the next, one agent is broken: the
  suite run fails its gate, the ``agentflow.eval.regressed`` and
  ``agentflow.eval.suite-regressed`` events are in the server's events API, and the
  automation that deployments/README.md's commands create (from
  deployments/automations/regressed-webhook.yaml) posts to a webhook.

The workers share one local publish folder (no S3 needed for one machine). The server is
the session's (tests/e2e/conftest.py); the workers serve a pool of their own."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect.client.orchestration import PrefectClient
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterDeploymentId

from tests.support.markdown_doc import blocks_of, section, venv_env
from tests.support.prefect_server import (
    ROOT,
    PrefectServer,
    deployable_copy,
    prefect_cli,
    prefect_env,
    process_worker,
    server_events,
)
from tests.support.webhook import recording_webhook, wait_for_posts

pytestmark = pytest.mark.e2e
POOL = "e2e-regression-suite"

AGENTS = """
import os
from pathlib import Path

RAN_ON = Path({ran_on!r})


def _note(name):
    # which worker's process answered: each worker has its own PREFECT_HOME, and the
    # flow runs it starts inherit it
    RAN_ON.mkdir(exist_ok=True)
    (RAN_ON / f"{{name}}@{{Path(os.environ['PREFECT_HOME']).name}}").touch()


def paris(message):
    _note("paris")
    return "Light rain in Paris."


def tokyo(message):
    _note("tokyo")
    return "Sunny in Tokyo."


def broken(message):
    return "I have no idea."


def paris_agent(message):
    # one agent whose nightly versions differ ('latest' is the same agent's run)
    return (paris if (RAN_ON.parent / "version.txt").read_text() == "1" else broken)(message)
"""


@pytest.fixture(scope="module")
def webhook() -> Iterator[tuple[str, list[dict]]]:
    with recording_webhook() as hook:
        yield hook


SLACK_URL = "https://hooks.slack.com/services/T000/B000/XXXX"


def _create_automation_as_documented(home: Path, api_url: str, project: Path, url: str) -> None:
    """Run the README's "Notify the team" commands (the webhook block, its id into
    the automation file, `prefect automation create`), with a local URL for Slack's."""
    text = section((ROOT / "deployments" / "README.md").read_text(), "## Nightly regression")
    (block,) = [b for b in blocks_of(text) if "regressed-webhook.yaml" in b.text]
    assert SLACK_URL in block.text
    assert (project / "deployments" / "automations" / "regressed-webhook.yaml").is_file()
    env = venv_env(Path(sys.executable).parent.parent, prefect_env(home, api_url))
    done = subprocess.run(
        ["bash", "-e", "-c", block.text.replace(SLACK_URL, url)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def pool(tmp_path_factory, webhook, shared_prefect: PrefectServer):
    root = tmp_path_factory.mktemp("regression-suite")
    home = root / "deploy-home"
    home.mkdir()
    project = deployable_copy(root / "project", POOL)
    api_url = shared_prefect.api_url
    prefect_cli(home, api_url, "work-pool", "create", POOL, "--type", "process", cwd=project)
    prefect_cli(
        home, api_url, "deploy", "--all", cwd=project, AGENTFLOW_EVAL_PROJECT_DIR=str(project)
    )
    _create_automation_as_documented(home, api_url, project, webhook[0])
    homes = [root / "worker-a-home", root / "worker-b-home"]
    for worker_home in homes:
        worker_home.mkdir()
    with (
        process_worker(homes[0], api_url, POOL, project, "--limit", "2", name="a") as a,
        process_worker(
            homes[1],
            api_url,
            POOL,
            project,
            "--work-queue",
            "default",
            "--limit",
            "1",
            name="b",
        ) as b,
    ):
        yield api_url, [a, b]


async def _run_suite(api_url: str, parameters: dict, timeout_s: float = 300) -> object:
    async with PrefectClient(api=api_url) as client:
        deployment = await client.read_deployment_by_name("regression/nightly")
        run = await client.create_flow_run_from_deployment(deployment.id, parameters=parameters)
        for _ in range(int(timeout_s / 2)):
            run = await client.read_flow_run(run.id)
            if run.state and run.state.is_final():
                return run
            await asyncio.sleep(2)
    raise AssertionError(f"the suite run did not finish within {timeout_s}s")


async def _evaluate_runs(api_url: str, suite_run_id: str) -> list:
    """The evaluate/adhoc runs the suite run ``suite_run_id`` started (labelled with it)."""
    async with PrefectClient(api=api_url) as client:
        adhoc = await client.read_deployment_by_name("evaluate/adhoc")
        runs = await client.read_flow_runs(
            flow_run_filter=FlowRunFilter(deployment_id=FlowRunFilterDeploymentId(any_=[adhoc.id]))
        )
    label = f"e2e@{suite_run_id}#"
    return [
        r
        for r in runs
        if str(r.parameters.get("labels", {}).get("regression", "")).startswith(label)
    ]


def _related(event) -> set[str]:
    return {r.id for r in event.related}


def test_the_nightly_suite_spreads_over_workers_and_a_regression_notifies(pool, webhook, tmp_path):
    api_url, worker_logs = pool
    agents = tmp_path / "suite_agents.py"
    ran_on = tmp_path / "ran-on"
    agents.write_text(AGENTS.format(ran_on=str(ran_on)))
    sets = {}
    for name, case, word in [("paris", "rain", "rain"), ("tokyo", "sun", "Sunny")]:
        path = tmp_path / f"{name}.evalset.json"
        path.write_text(
            json.dumps(
                {
                    "eval_set_id": f"{name}_weather",
                    "eval_cases": [
                        {
                            "eval_id": case,
                            "conversation": [{"user_content": f"Weather in {name}?"}],
                            "expectations": [{"final_contains": word}],
                        }
                    ],
                }
            )
        )
        sets[name] = str(path)
    published = tmp_path / "published"

    def suite(paris_agent: str, fail_on_regression: bool) -> dict:
        return {
            "suite": "e2e",
            "evals": [
                {"agent": f"{agents}:{paris_agent}", "evalset": sets["paris"], "runs": 5},
                {"agent": f"{agents}:tokyo", "evalset": sets["tokyo"], "runs": 5},
            ],
            "publish_to": str(published),
            "output_dir": str(tmp_path / "out"),
            "fail_on_regression": fail_on_regression,
        }

    # the first night: both eval sets as evaluate/adhoc runs, one on each worker
    (tmp_path / "version.txt").write_text("1")
    first = asyncio.run(_run_suite(api_url, suite("paris_agent", True)))
    logs = [log.read_text() for log in worker_logs]
    assert first.state.is_completed(), first.state.message + "\n".join(logs)[-4000:]
    children = asyncio.run(_evaluate_runs(api_url, str(first.id)))
    assert len(children) == 2 and all(r.state.is_completed() for r in children)
    assert all(r.parent_task_run_id for r in children)  # shown under the suite run
    homes = sorted(p.name for p in ran_on.iterdir())
    assert homes in (
        ["paris@worker-a-home", "tokyo@worker-b-home"],
        ["paris@worker-b-home", "tokyo@worker-a-home"],
    ), f"the evaluate runs did not spread over both workers: {homes}\n" + "\n".join(
        log[-3000:] for log in logs
    )

    # the next night the Paris agent is broken: the suite regresses and fails its gate
    (tmp_path / "version.txt").write_text("2")
    second = asyncio.run(_run_suite(api_url, suite("paris_agent", True)))
    assert second.state.is_failed(), second.state.message
    assert "paris_weather (regression)" in second.state.message
    (summary_path,) = [
        p
        for p in (published / "regression" / "e2e").glob("*/summary.json")
        if str(second.id) in p.parent.name
    ]
    summary = json.loads(summary_path.read_text())
    assert summary["verdict"] == "regression"
    assert [e["status"] for e in summary["evals"]] == ["regression", "no significant change"]
    assert (summary_path.parent / "summary.html").is_file()

    # the events of this night's runs (the server is the session's)
    tonight = {
        f"prefect.flow-run.{r.id}" for r in asyncio.run(_evaluate_runs(api_url, str(second.id)))
    }
    tonight.add(f"prefect.flow-run.{second.id}")
    (regressed,) = asyncio.run(
        server_events(api_url, "agentflow.eval.regressed", lambda e: _related(e) & tonight)
    )
    assert regressed.resource.id == "agentflow.eval-set.paris_weather"
    assert regressed.payload["regressed_cases"][0]["case_id"] == "rain"
    (suite_regressed,) = asyncio.run(
        server_events(api_url, "agentflow.eval.suite-regressed", lambda e: _related(e) & tonight)
    )
    assert suite_regressed.resource.id == "agentflow.eval-suite.e2e"
    assert any(r.id == f"prefect.flow-run.{second.id}" for r in suite_regressed.related)

    # the automation on agentflow.eval.regressed called the webhook
    posted = wait_for_posts(webhook[1])
    assert posted, "the automation did not call the webhook"
    text = posted[0]["text"]
    assert "Regression in paris_weather" in text and "rain 5/5 -> 0/5" in text
    assert "report.html" in text
