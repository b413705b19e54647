"""A run's own deadline: a run still going after its ``timeout_minutes`` stops where it is.

The trials it finished are in its run folder, so a resume finishes it; nothing it left
undone is charged to the agent (the deadline is the run's, not a trial's: a trial that
hangs is its own timeout's, or the loop watchdog's). The deadline cancels the trials
running then, and an agent that ignores the cancellation is abandoned after its grace
(:mod:`agentflow_eval.run.abandonable`), so the run stops within that grace of its
deadline. Every front door bounds a run with this: the ``evaluate``
flow (its ``timeout_minutes``) and the CLI (``--timeout-minutes``), with one default
(:data:`agentflow_eval.models.defaults.RUN_TIMEOUT_MINUTES`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

from agentflow_eval.errors import RunStopped

__all__ = ["RunTimedOut", "within_deadline"]

T = TypeVar("T")


class RunTimedOut(RunStopped):
    """The run was still going at its deadline: stopped where it was, what it finished
    kept in ``run_dir`` for a resume. The message is in the flow's words
    (``timeout_minutes``, ``resume=``); the CLI words its own from the attributes."""

    def __init__(self, minutes: float, run_dir: Path) -> None:
        super().__init__(
            f"the run did not finish within {minutes:g} min (timeout_minutes); the trials "
            f"it finished are kept in {run_dir}: run again with resume={run_dir} to finish it"
        )
        self.minutes = minutes
        self.run_dir = run_dir


async def within_deadline(
    minutes: float | None,
    work: Awaitable[T],
    run_dir: Path,
) -> T:
    """``work``'s result, or :class:`RunTimedOut` once ``minutes`` have passed (``None``
    or 0: no deadline)."""
    if not minutes:
        return await work
    deadline = asyncio.timeout(minutes * 60)
    try:
        async with deadline:
            return await work
    except TimeoutError:
        if not deadline.expired():  # a timeout of the work's own, not the run's
            raise
        raise RunTimedOut(minutes, run_dir) from None
