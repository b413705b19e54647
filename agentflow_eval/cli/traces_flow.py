"""The traces command's Prefect path: a traces request as a run of the ``evaluate-traces``
flow in this process, on the temporary API server the command launched early (or the
server ``PREFECT_API_URL`` names). Imported only when the command takes this path."""

from __future__ import annotations

from agentflow_eval.flows.evaluate_traces import evaluate_traces
from agentflow_eval.flows.support.temporary_api import TemporaryPrefectAPI, run_on
from agentflow_eval.models.traces_request import TracesRequest
from agentflow_eval.pipeline.score_traces import TracesOutcome

__all__ = ["traces_flow_run"]


async def traces_flow_run(api: TemporaryPrefectAPI | None, request: TracesRequest) -> TracesOutcome:
    """Score ``request``'s traces in a run of the evaluate-traces flow on ``api``."""
    return await run_on(
        api,
        lambda: evaluate_traces(**request.flow_parameters()),
        flow_name=evaluate_traces.name,
    )
