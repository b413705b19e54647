"""A run that ran out of file descriptors, found behind whatever wrapped it.

An agent that leaves files, sockets or pipes open uses up the process's limit (its soft
``RLIMIT_NOFILE``, ``ulimit -n``): its own later opens fail its trials, and then whatever
the run opens — the trials file, the judged file, a judge's connection — fails too. The
run cannot go on in this process, but nothing of it is lost: it stops with one line and
the infrastructure exit code, and a ``--resume`` (a fresh process, the agent's leaked
descriptors gone with the old one) finishes it.
"""

from __future__ import annotations

import errno

from agentflow_eval.files.os_error_chain import os_error_in

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]

__all__ = ["descriptor_limit", "descriptors_exhausted_in"]

_EXHAUSTED = {errno.EMFILE, errno.ENFILE}
"""Too many open files: in this process (EMFILE), or in the whole system (ENFILE)."""


def descriptors_exhausted_in(exc: BaseException) -> OSError | None:
    """The "too many open files" error behind ``exc``; ``None`` for anything else."""
    return os_error_in(exc, _EXHAUSTED)


def descriptor_limit() -> int | None:
    """This process's soft limit of open file descriptors (``None``: none, or unknown)."""
    if resource is None:  # pragma: no cover - not POSIX
        return None  # type: ignore[unreachable]
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return None if soft == resource.RLIM_INFINITY else soft
