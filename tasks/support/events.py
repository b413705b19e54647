"""Prefect events a run emits, for automations (notify, page, start the next step).

- ``agentflow.eval.completed``: every run that produced results, with its pass rate,
  counts, the report's URL (or local path), the agent and its version.
- ``agentflow.eval.publish-failed``: the report could not be published; the payload says
  where it was going, why it failed and where the run folder is kept.

The event's resource is the eval set (``agentflow.eval-set.<id>``); the agent
(``agentflow.agent.<key>``) is a related resource, and Prefect adds the flow run, flow and
deployment the event was emitted from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect.events import emit_event

from agentflow_eval.models.results import RunResult
from agentflow_eval.tasks.support.artifacts import ArtifactScope

__all__ = ["COMPLETED", "PUBLISH_FAILED", "emit_completed", "emit_publish_failed"]

COMPLETED = "agentflow.eval.completed"
PUBLISH_FAILED = "agentflow.eval.publish-failed"


def _resources(run: RunResult, scope: ArtifactScope) -> tuple[dict[str, str], list[dict[str, str]]]:
    resource = {
        "prefect.resource.id": f"agentflow.eval-set.{run.eval_set_id}",
        "prefect.resource.name": run.eval_set_name or run.eval_set_id,
        "agentflow.run.id": run.run_id,
    }
    related = [
        {
            "prefect.resource.id": f"agentflow.agent.{scope.agent or run.agent}",
            "prefect.resource.role": "agent",
            "prefect.resource.name": run.agent,
        }
    ]
    return resource, related


def completed_payload(
    run: RunResult, report_url: str | None, run_dir: Path, published: bool | None
) -> dict[str, Any]:
    totals = run.totals
    return {
        "run_id": run.run_id,
        "eval_set_id": run.eval_set_id,
        "agent": run.agent,
        "agent_version": run.agent_version,
        "git_sha": run.git_sha,
        "labels": run.labels,
        "pass_rate": totals.pass_rate,
        "ci_low": totals.ci_low,
        "ci_high": totals.ci_high,
        "trials": totals.trials,
        "passed": totals.passed,
        "failed": totals.failed,
        "errored": totals.errored,
        "simulated": run.simulated,
        "report_url": report_url,
        "run_dir": str(run_dir),
        "published": published,
    }


def emit_completed(
    run: RunResult,
    *,
    report_url: str | None,
    run_dir: Path,
    published: bool | None,
    scope: ArtifactScope,
) -> None:
    """Emit ``agentflow.eval.completed``. ``published`` is None when nothing was to be
    published."""
    resource, related = _resources(run, scope)
    emit_event(
        COMPLETED,
        resource=resource,
        related=related,
        payload=completed_payload(run, report_url, run_dir, published),
    )


def emit_publish_failed(
    run: RunResult, *, target: str, message: str, run_dir: Path, scope: ArtifactScope
) -> None:
    """Emit ``agentflow.eval.publish-failed``."""
    resource, related = _resources(run, scope)
    emit_event(
        PUBLISH_FAILED,
        resource=resource,
        related=related,
        payload={
            "run_id": run.run_id,
            "eval_set_id": run.eval_set_id,
            "agent_version": run.agent_version,
            "target": target,
            "message": message,
            "run_dir": str(run_dir),
        },
    )
