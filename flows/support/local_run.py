"""The evaluate flow run in this process, the CLI's way: on the temporary Prefect API that
:mod:`agentflow_eval.flows.support.temporary_api` launched, with the trials running while
that server boots.

The server takes seconds to boot, and the trial stage needs nothing from Prefect. So
when the server is not up yet, the run is planned here (its folder and ``run.json``), its
trials start at once (:class:`~agentflow_eval.run.early_trials.EarlyTrials`), and once the
server answers and those trials are done, the flow is handed the run folder: its
load-evalset task reopens the folder and its run-trials task takes the trials' counts.
Everything after the trials (judging, reports, artifacts, publishing) runs in the flow as
always. The flow waits for the trials rather than starting beside them because a flow
run's start costs CPU in this process, which the trials then lack (measured on 2 cores,
200 cases × 5 trials: the trial phase went from 1.1× to 1.35× a bare client's time, for
about 0.3 s less in all).

No early start when the run's rate limits name Prefect global concurrency limits: those
live on the server, so the trials wait for it.
"""

from __future__ import annotations

import asyncio
import importlib

from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.flows.support.temporary_api import LocalPrefectAPI

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.run.early_trials import EarlyTrials
from agentflow_eval.run.plan import RunOutcome, RunPlan, plan_run

__all__ = ["TemporaryAPIError", "evaluate_here"]

_RUN_ENGINES = ("prefect.flow_engine", "prefect.task_engine")
"""What Prefect imports at a process's first flow run (~0.2 s here)."""


class TemporaryAPIError(RuntimeError):
    """Prefect's temporary server did not start; says where finished trials are kept."""


async def _ready_and_warm(api: LocalPrefectAPI) -> None:
    """Wait for the server, then warm it up for the flow's start (~0.5 s less), while the
    trials may still be running."""
    await api.ready()
    await asyncio.to_thread(api.warm_up, evaluate.name)


async def _trials_then_engines(early: EarlyTrials | None) -> None:
    """Wait for the early trials, then import what the flow's start will need anyway:
    done before, in a thread, the import would slow the trials (one interpreter lock)."""
    if early is not None:
        await early.wait()
    for name in _RUN_ENGINES:
        importlib.import_module(name)


def _uses_prefect_limits(plan: RunPlan) -> bool:
    """Whether the run's rate limits use limits kept on the Prefect server."""
    return any(
        limit.prefect_limit or limit.prefect_rate_limit
        for limit in plan.config.rate_limits.values()
    )


async def evaluate_here(
    params: EvaluateParams, agent: AgentUnderTest, api: LocalPrefectAPI | None
) -> RunOutcome:
    """Run the evaluate flow in this process, on ``api`` when Prefect has no API of its
    own, starting the trials while ``api`` boots."""
    if api is None or not api.wanted():
        return await evaluate(params)
    plan = plan_run(params, agent_name=agent.name, agent_model=getattr(agent, "model", None))
    params = params.model_copy(update={"resume": str(plan.paths.run_dir)})
    early = None
    if not _uses_prefect_limits(plan):
        early = EarlyTrials.begin(plan, agent, rate_limiter=RateLimiter.from_config(plan.config))
    try:
        try:
            await asyncio.gather(_ready_and_warm(api), _trials_then_engines(early))
        except RuntimeError as exc:
            raise TemporaryAPIError(
                f"{exc}; the trials that finished are kept in {params.resume}: finish the "
                f"run with agentflow-eval run --resume {params.resume}"
            ) from exc
        with api.serving():
            return await evaluate(params)
    finally:
        if early is not None:
            await early.cancel()
