"""The run command's Prefect path: a prepared run request as a run of the ``evaluate``
flow in this process, on the temporary API server the command launched early (or the
server ``PREFECT_API_URL`` names). The only module of the command that imports Prefect,
imported only when a run takes this path."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agentflow_eval.flows.evaluate import PassRateGateFailed, RegressionGateFailed, evaluate
from agentflow_eval.flows.support.console import quiet_deliberate_stops
from agentflow_eval.flows.support.temporary_api import TemporaryPrefectAPI, run_on
from agentflow_eval.pipeline.execute import PreparedRun
from agentflow_eval.pipeline.outcome import RunOutcome

__all__ = ["flow_run"]


def flow_run(
    api: TemporaryPrefectAPI | None, prepared: PreparedRun
) -> Callable[[], Awaitable[RunOutcome]]:
    """The prepared run as a run of the ``evaluate`` flow on ``api`` (a call that makes
    the coroutine). A failed gate ends the flow run Failed and hands back the complete
    run: the command reports it, then exits as the gate says."""
    quiet_deliberate_stops()  # a run stopped on purpose is told in one line

    async def run() -> RunOutcome:
        try:
            return await run_on(
                api,
                lambda: evaluate(**prepared.request.flow_parameters(), planned=prepared),
                flow_name=evaluate.name,
            )
        except (RegressionGateFailed, PassRateGateFailed) as exc:
            return exc.outcome

    return run
