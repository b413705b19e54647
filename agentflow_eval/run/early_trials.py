"""A run's trial stage, started in this process before the flow that owns it.

A CLI run without a Prefect API boots Prefect's temporary server, which takes seconds
(~5–7 s on 2 cores). The trials need nothing from Prefect, so the CLI plans the run
(its folder and ``run.json``), starts the trial stage at once and hands the flow the run
folder; the flow's run-trials task then joins the trials under way instead of starting
its own. Each finished trial is in ``trials.jsonl`` as soon as it finishes, so a run
stopped before its flow started resumes like any other (``--resume RUN_DIR``).

    early = EarlyTrials.begin(plan, agent, rate_limiter=limiter)   # in a running loop
    ...                                                            # the flow starts
    counts = await EarlyTrials.find(plan.paths.run_dir).join(on_trial)

Trials under way are looked up by run folder, in this process only.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Callable
from pathlib import Path

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.models.results import Trial
from agentflow_eval.run.plan import RunPlan, run_planned_trials
from agentflow_eval.run.stages import StageCounts

__all__ = ["EarlyTrials"]

_UNDER_WAY: dict[Path, EarlyTrials] = {}


class EarlyTrials:
    """The trial stage of one planned run, running as an asyncio task of this process."""

    def __init__(self, run_dir: Path, rate_limiter: RateLimiter) -> None:
        self.run_dir = run_dir
        self.rate_limiter = rate_limiter
        """The run's limiter: the flow binds it for the judges too, so they share it."""
        self.started = time.monotonic()
        self.finished = 0
        """Trials finished so far by this stage (not counting those a resume skipped)."""
        self._follower: Callable[[Trial], None] | None = None
        self._follower_context: contextvars.Context | None = None
        self._task: asyncio.Task[StageCounts] | None = None

    @classmethod
    def begin(
        cls, plan: RunPlan, agent: AgentUnderTest, *, rate_limiter: RateLimiter
    ) -> EarlyTrials:
        """Start the trial stage of ``plan`` now, in the running event loop."""
        run_dir = plan.paths.run_dir.resolve()
        if run_dir in _UNDER_WAY:
            raise RuntimeError(f"{run_dir}: trials are already under way for this run folder")
        early = cls(run_dir, rate_limiter)
        early._task = asyncio.get_running_loop().create_task(
            run_planned_trials(plan, agent, on_trial=early._on_trial, rate_limiter=rate_limiter),
            name=f"early trials {run_dir.name}",
        )
        _UNDER_WAY[run_dir] = early
        return early

    @staticmethod
    def find(run_dir: Path) -> EarlyTrials | None:
        """The trials under way in this process for ``run_dir``, if any."""
        return _UNDER_WAY.get(run_dir.resolve())

    @property
    def running_s(self) -> float:
        """Seconds since the stage started."""
        return time.monotonic() - self.started

    def _on_trial(self, trial: Trial) -> None:
        self.finished += 1
        if self._follower is not None:
            # in the joiner's context, not the trials' (which began before the flow run:
            # no Prefect API URL there, no run context; Prefect would start a server)
            asyncio.get_running_loop().call_soon(
                self._follower, trial, context=self._follower_context
            )

    async def wait(self) -> None:
        """Wait until the stage has ended (finished or failed), leaving its result to
        :meth:`join`."""
        assert self._task is not None
        await asyncio.wait([self._task])

    async def join(self, on_trial: Callable[[Trial], None] | None = None) -> StageCounts:
        """Wait for the stage to finish and return its counts; ``on_trial`` is called for
        each trial that finishes from now on, in the caller's context. The run folder is
        released either way."""
        assert self._task is not None
        self._follower = on_trial
        self._follower_context = contextvars.copy_context()
        try:
            return await asyncio.shield(self._task)
        finally:
            _UNDER_WAY.pop(self.run_dir, None)

    async def cancel(self) -> None:
        """Stop the stage (a no-op once it finished) and release the run folder. Trials
        already finished stay in ``trials.jsonl``."""
        _UNDER_WAY.pop(self.run_dir, None)
        if self._task is None:
            return
        if self._task.done():
            if not self._task.cancelled():
                self._task.exception()  # seen: joined already, or the caller is failing
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
