"""What the CLI's terminal shows of Prefect's own logging when a run stops on purpose.

When a model provider refuses the credentials, a run folder turns out to be held by
another run, the disk fills up, the process runs out of file descriptors or the run
reaches its timeout, the stage raises and
Prefect logs the task's and the flow's failure with two full tracebacks — on the
terminal, right above the one line the CLI prints to say what happened and what to do.
:func:`quiet_deliberate_stops` keeps those records off the terminal only: the run's record
on the Prefect server (its logs, its states) keeps them whole.
"""

from __future__ import annotations

import logging

from agentflow_eval.files.disk_full import disk_full_in
from agentflow_eval.files.out_of_descriptors import descriptors_exhausted_in

__all__ = ["DELIBERATE_STOPS", "quiet_deliberate_stops"]

DELIBERATE_STOPS = ("ProviderAuthError", "RunFolderBusy", "ResumeMismatch", "RunTimedOut")
"""The exceptions a run stops with on purpose, each explained by the CLI in one line."""

_OUT_OF = ("[Errno 28]", "[Errno 122]", "[Errno 24]", "[Errno 23]")
"""ENOSPC, EDQUOT, EMFILE, ENFILE, as a state's message quotes them."""


class _DeliberateStops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR or not record.name.startswith("prefect"):
            return True
        text = record.getMessage()
        if any(code in text for code in _OUT_OF):
            return False
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            if disk_full_in(exc) is not None or descriptors_exhausted_in(exc) is not None:
                return False
            text += f" {type(exc).__name__} " + " ".join(
                type(inner).__name__ for inner in getattr(exc, "exceptions", ())
            )
        return not any(name in text for name in DELIBERATE_STOPS)


_FILTER = _DeliberateStops()


def quiet_deliberate_stops() -> None:
    """Attach the filter to every Prefect console handler configured now (call it after
    Prefect is imported). Idempotent."""
    from prefect.logging.handlers import PrefectConsoleHandler

    loggers = [logging.getLogger()] + [
        logger
        for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)
    ]
    for logger in loggers:
        for handler in logger.handlers:
            if isinstance(handler, PrefectConsoleHandler) and _FILTER not in handler.filters:
                handler.addFilter(_FILTER)
