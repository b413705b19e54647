"""A worker machine lost in the middle of a nightly suite, on a real Prefect server with
process workers (each with its own PREFECT_HOME, as separate machines would have):

- worker ``a`` serves the suite's queue, worker ``b`` the evaluate runs; the eval set's
  agent hangs on ``b``'s machine, and the test kills ``b`` and its flow run's process at
  once (SIGKILL, as a machine losing power would stop them);
- the automation that marks unresponsive runs Crashed (deployments/automations/
  crash-unresponsive-runs.yaml), installed by ``prefect deploy`` (prefect.yaml's build
  step, its wait shortened through $AGENTFLOW_EVAL_UNRESPONSIVE_AFTER_S), ends the
  orphaned run once its heartbeats stop;
- with a crash retry left, the suite starts the crashed eval set again, worker ``c``
  (started after the loss) runs it, and the suite completes, its summary saying the eval
  set was evaluated;
- with none left, the suite ends Failed, incomplete, within the automation's wait (plus a
  heartbeat and a margin) of the loss: its summary names the crash, its
  ``agentflow.eval.suite-incomplete`` event is in the server, and the shipped automation
  (suite-incomplete-webhook.yaml) posts it to a webhook;
- the "no nightly run concluded" automation (no-nightly-run-webhook.yaml, its 26 hours
  shortened) calls its webhook when no suite concluded in its window.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from prefect.client.orchestration import PrefectClient
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterDeploymentId

from tests.support.prefect_server import (
    ROOT,
    PrefectServer,
    deployable_copy,
    kill_machine,
    prefect_cli,
    process_worker,
    server_events,
)
from tests.support.webhook import recording_webhook, wait_for_posts

pytestmark = pytest.mark.e2e
POOL = "e2e-lost-worker"
HEARTBEAT_S = 30  # the shortest Prefect allows
HEARTBEAT = {"PREFECT_FLOWS_HEARTBEAT_FREQUENCY": str(HEARTBEAT_S)}
UNRESPONSIVE_AFTER_S = 75
ENDED_MARGIN_S = 180
"""From the run marked Crashed to the suite ended: the triggers service's evaluation of
the proactive trigger, the suite's poll, its summary, publish and events. A bound on
liveness, not a speed: generous enough for a machine under several times its usual load
(a quiet one takes a few seconds)."""
CRASH_AUTOMATION = "crash-unresponsive-flow-runs"

AGENT = """
import os
import time
from pathlib import Path

MARKS = Path({marks!r})


def agent(message):
    machine = Path(os.environ["PREFECT_HOME"]).name
    MARKS.mkdir(exist_ok=True)
    (MARKS / machine).touch()
    while machine == "worker-b-home":  # this machine is about to be lost
        time.sleep(1)
    return "Light rain in Paris."
"""


def _automation_from(project: Path, home: Path, api_url: str, name: str, **replace: str) -> None:
    text = (ROOT / "deployments" / "automations" / name).read_text()
    for old, new in replace.items():
        assert old in text, f"{name} has no {old!r}"
        text = text.replace(old, new)
    path = project / name
    path.write_text(text)
    prefect_cli(home, api_url, "automation", "create", "--from-file", str(path), cwd=project)


async def _automations_named(api_url: str, name: str) -> list[Any]:
    async with PrefectClient(api=api_url) as client:
        return await client.read_automations_by_name(name)


async def _delete_automation(api_url: str, automation_id: Any) -> None:
    async with PrefectClient(api=api_url) as client:
        await client.delete_automation(automation_id)


@pytest.fixture(scope="module")
def pool(tmp_path_factory, shared_prefect: PrefectServer):
    root = tmp_path_factory.mktemp("lost-worker")
    home = root / "deploy-home"
    home.mkdir()
    project = deployable_copy(root / "project", POOL, crash_automation=True)
    api_url = shared_prefect.api_url
    prefect_cli(home, api_url, "work-pool", "create", POOL, "--type", "process", cwd=project)
    prefect_cli(
        home,
        api_url,
        "deploy",
        "--all",
        cwd=project,
        AGENTFLOW_EVAL_PROJECT_DIR=str(project),
        AGENTFLOW_EVAL_UNRESPONSIVE_AFTER_S=str(UNRESPONSIVE_AFTER_S),
    )
    # the deploy installed the crash automation (once, whatever other modules deployed)
    (crash,) = asyncio.run(_automations_named(api_url, CRASH_AUTOMATION))
    assert crash.trigger.within == timedelta(seconds=UNRESPONSIVE_AFTER_S)
    assert crash.actions[0].message.startswith(f"no heartbeat for {UNRESPONSIVE_AFTER_S} s")
    yield api_url, root, project
    # the modules after this one run without it (see deployable_copy)
    asyncio.run(_delete_automation(api_url, crash.id))


async def _start_suite(api_url: str, parameters: dict) -> object:
    async with PrefectClient(api=api_url) as client:
        deployment = await client.read_deployment_by_name("regression/nightly")
        return await client.create_flow_run_from_deployment(deployment.id, parameters=parameters)


async def _wait_final(api_url: str, run_id, timeout_s: float) -> object:
    async with PrefectClient(api=api_url) as client:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            run = await client.read_flow_run(run_id)
            if run.state and run.state.is_final():
                return run
            await asyncio.sleep(2)
    raise AssertionError(f"flow run {run_id} did not finish within {timeout_s}s")


async def _evaluate_runs(api_url: str, suite: str, suite_run_id) -> list:
    async with PrefectClient(api=api_url) as client:
        adhoc = await client.read_deployment_by_name("evaluate/adhoc")
        runs = await client.read_flow_runs(
            flow_run_filter=FlowRunFilter(deployment_id=FlowRunFilterDeploymentId(any_=[adhoc.id]))
        )
    label = f"{suite}@{suite_run_id}#"
    return sorted(
        (
            r
            for r in runs
            if str(r.parameters.get("labels", {}).get("regression", "")).startswith(label)
        ),
        key=lambda r: r.created,
    )


def _wait_for_file(path: Path, timeout_s: float, logs: list[Path]) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{path} did not appear within {timeout_s}s\n"
                + "\n".join(log.read_text()[-3000:] for log in logs if log.exists())
            )
        time.sleep(0.5)


@dataclass(frozen=True)
class LostWorker:
    """A suite whose evaluate run's machine (worker ``b``) was lost mid-trial."""

    suite: Any  # its flow run
    killed_at: datetime
    homes: dict[str, Path]
    logs: list[Path]
    marks: Path

    def log_tails(self) -> str:
        return "\n".join(log.read_text()[-3000:] for log in self.logs if log.exists())


@contextmanager
def _suite_losing_worker_b(
    api_url: str, project: Path, tmp_path: Path, suite: str, **parameters: object
) -> Iterator[LostWorker]:
    """Start suite ``suite`` (``parameters`` added) over one eval set whose agent hangs on
    worker ``b``'s machine; once it is there, kill ``b`` and its flow run's process. Yields
    while worker ``a``, which runs the suite, is still serving."""
    marks = tmp_path / "marks"
    agents = tmp_path / "lost_agents.py"
    agents.write_text(AGENT.format(marks=str(marks)))
    evalset = tmp_path / "paris.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "paris_weather",
                "eval_cases": [
                    {
                        "eval_id": "rain",
                        "conversation": [{"user_content": "Weather in Paris?"}],
                        "expectations": [{"final_contains": "rain"}],
                    }
                ],
            }
        )
    )
    homes = {name: tmp_path / f"worker-{name}-home" for name in "abc"}
    for home in homes.values():
        home.mkdir()
    logs = [home / f"{name}.log" for name, home in homes.items()]
    with process_worker(
        homes["a"], api_url, POOL, project, "--work-queue", "suites", name="a", env=HEARTBEAT
    ):
        with process_worker(
            homes["b"], api_url, POOL, project, "--work-queue", "default", name="b", env=HEARTBEAT
        ):
            run = asyncio.run(
                _start_suite(
                    api_url,
                    {
                        "suite": suite,
                        "evals": [{"agent": f"{agents}:agent", "evalset": str(evalset), "runs": 1}],
                        "publish_to": str(tmp_path / "published"),
                        "output_dir": str(tmp_path / "out"),
                        **parameters,
                    },
                )
            )
            _wait_for_file(marks / "worker-b-home", 180, logs)
            killed = kill_machine(int((homes["b"] / "b.pid").read_text()))
            killed_at = datetime.now(UTC)
            assert len(killed) >= 2, "the worker's flow run process was not among its children"
        yield LostWorker(run, killed_at, homes, logs, marks)


def test_a_worker_lost_mid_suite_is_crashed_retried_and_the_suite_completes(pool, tmp_path):
    api_url, _, project = pool
    with (
        _suite_losing_worker_b(
            api_url, project, tmp_path, "lost", crash_retries=1, fail_on_regression=False
        ) as lost,
        # the machine is gone; another one joins the pool
        process_worker(
            tmp_path / "worker-c-home",
            api_url,
            POOL,
            project,
            "--work-queue",
            "default",
            name="c",
            env=HEARTBEAT,
        ),
    ):
        ended = asyncio.run(_wait_final(api_url, lost.suite.id, 240 + UNRESPONSIVE_AFTER_S))
        children = asyncio.run(_evaluate_runs(api_url, "lost", lost.suite.id))

    assert ended.state.is_completed(), ended.state.message + lost.log_tails()
    assert [r.state.name for r in children] == ["Crashed", "Completed"], children
    crashed, retried = children
    assert "no heartbeat" in (crashed.state.message or "")
    assert retried.name.endswith("-retry-1")
    assert (lost.marks / "worker-c-home").exists()
    (summary_path,) = (tmp_path / "published" / "regression" / "lost").glob("*/summary.json")
    (outcome,) = json.loads(summary_path.read_text())["evals"]
    assert outcome["status"] == "not compared" and outcome["pass_rate"] == 1.0


def test_a_worker_lost_with_no_retry_left_ends_the_suite_failed_and_says_so(pool, tmp_path):
    api_url, root, project = pool
    suite = "lost-for-good"
    bound_s = UNRESPONSIVE_AFTER_S + HEARTBEAT_S + ENDED_MARGIN_S
    with recording_webhook() as (url, received):
        from prefect.blocks.webhook import Webhook
        from prefect.settings import PREFECT_API_URL, temporary_settings

        with temporary_settings({PREFECT_API_URL: api_url}):
            block_id = Webhook(url=url).save("suite-incomplete-e2e", overwrite=True)
        _automation_from(
            project,
            root / "deploy-home",
            api_url,
            "suite-incomplete-webhook.yaml",
            WEBHOOK_BLOCK_ID=str(block_id),
        )
        with _suite_losing_worker_b(
            api_url, project, tmp_path, suite, crash_retries=0, fail_on_regression=True
        ) as lost:
            ended = asyncio.run(_wait_final(api_url, lost.suite.id, bound_s + 60))
            (child,) = asyncio.run(_evaluate_runs(api_url, suite, lost.suite.id))
        posted = wait_for_posts(received, timeout_s=60)

    assert ended.state.is_failed(), (ended.state.message or "") + lost.log_tails()
    assert "paris_weather (failed)" in ended.state.message
    assert ended.end_time - lost.killed_at < timedelta(seconds=bound_s), (
        f"the suite ended {ended.end_time - lost.killed_at} after the loss, past the "
        f"{UNRESPONSIVE_AFTER_S} s wait + {HEARTBEAT_S} s heartbeat + {ENDED_MARGIN_S} s"
    )
    assert child.state.is_crashed()
    crash = f"no heartbeat for {UNRESPONSIVE_AFTER_S} s: its worker or machine was lost"
    assert child.state.message == crash

    (summary_path,) = (tmp_path / "published" / "regression" / suite).glob("*/summary.json")
    summary = json.loads(summary_path.read_text())
    assert summary["verdict"] == "incomplete"
    (outcome,) = summary["evals"]
    assert outcome["status"] == "failed" and "ended Crashed" in outcome["problem"]
    assert crash in outcome["problem"]

    of_this_run = f"prefect.flow-run.{lost.suite.id}"
    (event,) = asyncio.run(
        server_events(
            api_url,
            "agentflow.eval.suite-incomplete",
            lambda e: any(r.id == of_this_run for r in e.related),
        )
    )
    assert event.resource.id == f"agentflow.eval-suite.{suite}"
    assert [e["problem"] for e in event.payload["incomplete"]] == [outcome["problem"]]

    assert posted, "the suite-incomplete automation did not call the webhook"
    (message,) = posted
    assert message["text"].startswith(f"Suite {suite} incomplete: 1 eval set(s) not evaluated")
    assert f"paris_weather: {outcome['problem']}" in message["text"]


def test_no_nightly_run_in_its_window_calls_the_webhook(pool, tmp_path):
    api_url, root, project = pool
    home = root / "deploy-home"
    with recording_webhook() as (url, received):
        from prefect.blocks.webhook import Webhook
        from prefect.settings import PREFECT_API_URL, temporary_settings

        with temporary_settings({PREFECT_API_URL: api_url}):
            block_id = Webhook(url=url).save("no-nightly-e2e", overwrite=True)
        _automation_from(
            project,
            home,
            api_url,
            "no-nightly-run-webhook.yaml",
            **{
                "WEBHOOK_BLOCK_ID": str(block_id),
                "within: 93600": "within: 15",
                "agentflow.eval-suite.nightly": "agentflow.eval-suite.never-run",
            },
        )
        posted = wait_for_posts(received, timeout_s=120)
    assert posted, "the automation did not call the webhook"
    assert "No nightly evaluation suite concluded" in posted[0]["text"]
