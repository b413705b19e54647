"""Ctrl-C during a run: the run stops cleanly, the terminal stays quiet, and the command
says how to finish the run.

:func:`run_interruptibly` runs the flow's coroutine as ``asyncio.run`` would, with its
own SIGINT handler: the first Ctrl-C cancels the run (so the flow and its tasks wind down
and record the cancellation in Prefect) and silences the console from then on — the
"Crash detected" lines Prefect logs while it winds down go to the flow run's record, not
over the command's own message; a second Ctrl-C ends the process at once. The caller
gets :class:`KeyboardInterrupt` once the run has stopped. The cancellation reaches the
trials running then, and an agent that ignores it is abandoned after its grace
(:mod:`agentflow_eval.run.abandonable`), so the first Ctrl-C always stops the run.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["EXIT_ON_SECOND_INTERRUPT", "run_interruptibly"]

T = TypeVar("T")

EXIT_ON_SECOND_INTERRUPT = 130


class _AfterInterrupt(logging.Filter):
    """Lets console records through until the run is interrupted."""

    def __init__(self) -> None:
        super().__init__()
        self.interrupted = False

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.interrupted


def _console_handlers() -> list[logging.Handler]:
    """The handlers that write log records to the terminal (Prefect's console handler
    sits on the root logger)."""
    return [
        handler
        for handler in logging.getLogger().handlers
        if isinstance(handler, logging.StreamHandler)
        and not isinstance(handler, logging.FileHandler)
    ]


def run_interruptibly(make: Callable[[], Awaitable[T]]) -> T:
    """``asyncio.run(make())``, stopped cleanly by Ctrl-C (see the module docstring)."""
    quiet = _AfterInterrupt()
    handlers = _console_handlers()
    for handler in handlers:
        handler.addFilter(quiet)

    async def main() -> T:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        assert task is not None

        def on_interrupt(signum: int, frame: object) -> None:
            if quiet.interrupted:
                os._exit(EXIT_ON_SECOND_INTERRUPT)
            quiet.interrupted = True
            loop.call_soon_threadsafe(task.cancel)

        previous = signal.signal(signal.SIGINT, on_interrupt)
        try:
            return await make()
        finally:
            signal.signal(signal.SIGINT, previous)

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if quiet.interrupted:
            raise KeyboardInterrupt from None
        raise
    except BaseException:
        if quiet.interrupted:  # the run ended with another error while winding down
            raise KeyboardInterrupt from None
        raise
    finally:
        if not quiet.interrupted:  # once interrupted, Prefect's shutdown logs stay quiet too
            for handler in handlers:
                handler.removeFilter(quiet)
