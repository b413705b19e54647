"""How the current flow run was started, as the history (track) it joins by default:
``schedule`` (a deployment's schedule), ``event`` (an automation, e.g. a deploy event's
trigger) or ``adhoc`` (by hand, the API, a parent flow, or outside a deployment). Runs
started each way keep apart histories, so an ad-hoc try is never the nightly's baseline."""

from __future__ import annotations

from prefect.client.orchestration import get_client
from prefect.runtime import flow_run

from agentflow_eval.models import defaults

__all__ = ["EVENT_TRACK", "SCHEDULE_TRACK", "trigger_track"]

SCHEDULE_TRACK = "schedule"
EVENT_TRACK = "event"


async def trigger_track() -> str:
    """The track of the current flow run: how it was started (see the module)."""
    run_id = flow_run.id
    if not run_id:
        return defaults.TRACK
    async with get_client() as client:
        run = await client.read_flow_run(run_id)
    if run.created_by is not None and run.created_by.type == "AUTOMATION":
        return EVENT_TRACK
    if run.auto_scheduled:
        return SCHEDULE_TRACK
    return defaults.TRACK
