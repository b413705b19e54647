"""Steps ``prefect deploy`` runs from prefect.yaml (``build:``): checking a deployment
before it is stored rather than when its first run crashes on a worker, and installing
the automation its runs rely on to end when their worker is lost."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

__all__ = [
    "MIN_UNRESPONSIVE_AFTER_S",
    "PROJECT_DIR_VARIABLE",
    "ensure_automations",
    "project_directory",
]

PROJECT_DIR_VARIABLE = "AGENTFLOW_EVAL_PROJECT_DIR"

MIN_UNRESPONSIVE_AFTER_S = 60
"""Two heartbeats at the shortest frequency Prefect allows (30 s): a shorter wait would
crash runs whose workers are alive."""


def project_directory(
    variable: str = PROJECT_DIR_VARIABLE, entrypoint: str = "flows/evaluate.py"
) -> dict[str, str]:
    """The folder runs execute in: ``$AGENTFLOW_EVAL_PROJECT_DIR``, else the folder
    ``prefect deploy`` runs in. Refuses, naming the folder, one that does not exist or
    does not hold ``entrypoint``. Returns ``{"directory": <absolute path>}`` for the pull
    step (``{{ <step id>.directory }}``)."""
    given = os.environ.get(variable, "").strip()
    folder = Path(given).expanduser() if given else Path.cwd()
    where = f"{variable}={given}" if given else f"the current folder ({variable} is not set)"
    if not folder.is_dir():
        raise ValueError(
            f"project folder {folder} does not exist ({where}); set {variable} to the "
            "folder holding this project and your agents, as the worker sees it"
        )
    if entrypoint and not (folder / entrypoint).is_file():
        raise ValueError(
            f"project folder {folder.resolve()} has no {entrypoint} ({where}); set "
            f"{variable} to the folder holding this project and your agents"
        )
    return {"directory": str(folder.resolve())}


def ensure_automations(
    files: list[str], unresponsive_after_s: str | int | float = ""
) -> dict[str, list[str]]:
    """Create the automations written in ``files`` (YAML, as ``prefect automation create
    --from-file`` reads them; relative to the folder ``prefect deploy`` runs in), or update
    the ones already there by name: deploying again leaves one of each, as the files say.

    ``unresponsive_after_s`` (blank: the file's own) is the wait of the automations that
    mark an unresponsive flow run Crashed (a proactive trigger, a ``change-flow-run-state``
    action to ``CRASHED``), and the number of seconds their message states. Returns
    ``{"automations": [<name>, ...]}``."""
    from prefect.client.orchestration import get_client
    from prefect.events.schemas.automations import AutomationCore

    wait = _seconds(unresponsive_after_s)
    documents = [_read_automation(Path(name)) for name in files]
    if wait is not None:
        crashing = [d for d in documents if _crashes_unresponsive_runs(d)]
        if not crashing:
            raise ValueError(
                f"unresponsive_after_s is {wait} but none of {', '.join(files)} marks "
                "unresponsive flow runs Crashed"
            )
        for document in crashing:
            _set_wait(document, wait)
    automations = []
    for name, document in zip(files, documents, strict=True):
        try:
            automations.append(AutomationCore.model_validate(document))
        except ValidationError as exc:
            raise ValueError(f"automation file {Path(name).resolve()}: {exc}") from exc
    with get_client(sync_client=True) as client:
        for automation in automations:
            existing = client.read_automations_by_name(automation.name)
            if not existing:
                client.create_automation(automation)
                continue
            # newest first: keep it, drop copies made by hand before the deploy did this
            keep, *copies = existing
            client.update_automation(keep.id, automation)
            for copy in copies:
                client.delete_automation(copy.id)
    return {"automations": [automation.name for automation in automations]}


def _seconds(value: str | int | float) -> int | None:
    """``value`` as a whole number of seconds; None when blank (unset in the deploy's
    environment)."""
    text = str(value).strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not number.is_integer() or number < MIN_UNRESPONSIVE_AFTER_S:
        raise ValueError(
            f"unresponsive_after_s {text!r} is not a whole number of seconds of at least "
            f"{MIN_UNRESPONSIVE_AFTER_S} (two heartbeats at Prefect's shortest frequency)"
        )
    return int(number)


def _read_automation(path: Path) -> dict[str, Any]:
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"automation file {path.resolve()}: {exc}") from exc
    if not isinstance(document, dict) or not document.get("name"):
        raise ValueError(f"automation file {path.resolve()} holds no named automation")
    return document


def _crashes_unresponsive_runs(document: dict[str, Any]) -> bool:
    trigger = document.get("trigger") or {}
    return str(trigger.get("posture", "")).lower() == "proactive" and any(
        action.get("type") == "change-flow-run-state"
        and str(action.get("state", "")).upper() == "CRASHED"
        for action in document.get("actions") or []
    )


def _set_wait(document: dict[str, Any], seconds: int) -> None:
    """Give the automation the wait ``seconds``; its Crashed message, which states the
    file's wait, states this one."""
    trigger = document["trigger"]
    stated = f"{trigger['within']:g} s"
    for action in document["actions"]:
        if action.get("type") != "change-flow-run-state":
            continue
        message = str(action.get("message") or "")
        if stated not in message:
            raise ValueError(
                f"automation {document['name']}: its message {message!r} does not state "
                f"its wait ({stated}), so it cannot state the new one"
            )
        action["message"] = message.replace(stated, f"{seconds} s")
    trigger["within"] = seconds
