"""The build step of prefect.yaml that installs the automation marking unresponsive flow
runs Crashed: run as ``prefect deploy`` runs it (its inputs templated from the
environment), against the harness's API."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from prefect.client.orchestration import get_client
from prefect.deployments.steps.core import run_step
from prefect.events.actions import ChangeFlowRunState
from prefect.events.schemas.automations import Automation, AutomationCore, EventTrigger

from agentflow_eval.flows.support.deploy_steps import ensure_automations

ROOT = Path(__file__).resolve().parents[2]
STEP = "agentflow_eval.flows.support.deploy_steps.ensure_automations"
NAME = "crash-unresponsive-flow-runs"
WAIT_VARIABLE = "AGENTFLOW_EVAL_UNRESPONSIVE_AFTER_S"


def _shipped_step() -> dict[str, Any]:
    (step,) = [s for s in yaml.safe_load((ROOT / "prefect.yaml").read_text())["build"] if STEP in s]
    return step


def _crash_setting(automation: Automation) -> tuple[float, str | None]:
    """The automation's wait (s) and the message of the Crashed state it sets."""
    trigger, (action,) = automation.trigger, automation.actions
    assert isinstance(trigger, EventTrigger) and isinstance(action, ChangeFlowRunState)
    assert trigger.posture == "Proactive" and trigger.after == {"prefect.flow-run.heartbeat"}
    assert action.state == "CRASHED"
    return trigger.within.total_seconds(), action.message


def _installed() -> list[Automation]:
    with get_client(sync_client=True) as client:
        return client.read_automations_by_name(NAME)


@pytest.fixture
def at_project_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """In the folder ``prefect deploy`` runs in, with no automation installed yet; the
    one installed is removed after (the harness's API outlives the test)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv(WAIT_VARIABLE, raising=False)
    assert _installed() == []
    yield
    with get_client(sync_client=True) as client:
        for automation in client.read_automations_by_name(NAME):
            client.delete_automation(automation.id)


def test_the_deploy_installs_the_crash_automation_once_and_updates_its_wait(
    at_project_root: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = _shipped_step()
    asyncio.run(run_step(step))
    asyncio.run(run_step(step))  # deploying again: still one, unchanged

    (installed,) = _installed()
    assert _crash_setting(installed) == (
        600,
        "no heartbeat for 600 s: its worker or machine was lost",
    )

    monkeypatch.setenv(WAIT_VARIABLE, "90")
    asyncio.run(run_step(step))
    (updated,) = _installed()
    assert updated.id == installed.id
    assert _crash_setting(updated) == (90, "no heartbeat for 90 s: its worker or machine was lost")


def test_copies_made_by_hand_before_are_replaced_by_one(at_project_root: None) -> None:
    files = ["deployments/automations/crash-unresponsive-runs.yaml"]
    ensure_automations(files)
    ensure_automations([])  # nothing to install: nothing touched
    with get_client(sync_client=True) as client:
        (original,) = client.read_automations_by_name(NAME)
        client.create_automation(AutomationCore.model_validate(original.model_dump()))
    assert len(_installed()) == 2
    assert ensure_automations(files, 120) == {"automations": [NAME]}
    (left,) = _installed()
    assert _crash_setting(left)[0] == 120


@pytest.mark.parametrize("wait", ["ten", "30", "90.5"])
def test_a_wait_that_is_not_whole_seconds_past_two_heartbeats_stops_the_deploy(
    at_project_root: None, wait: str
) -> None:
    with pytest.raises(ValueError, match=f"unresponsive_after_s '{wait}'"):
        ensure_automations(["deployments/automations/crash-unresponsive-runs.yaml"], wait)
    assert _installed() == []


def test_a_wait_for_files_with_no_crash_automation_stops_the_deploy(
    at_project_root: None,
) -> None:
    with pytest.raises(ValueError, match="marks unresponsive flow runs Crashed"):
        ensure_automations(["deployments/automations/regressed-webhook.yaml"], 120)


def test_a_file_that_is_no_automation_stops_the_deploy_naming_it(
    at_project_root: None, tmp_path: Path
) -> None:
    broken = tmp_path / "typo.yaml"
    broken.write_text("name: typo\ntrigger: {type: event, posture: Sometimes}\nactions: []\n")
    files = ["deployments/automations/crash-unresponsive-runs.yaml", str(broken)]
    with pytest.raises(ValueError, match=f"automation file {broken}"):
        ensure_automations(files)
    assert _installed() == []  # every file is checked before any is installed
