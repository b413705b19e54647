"""A write that failed because its disk (or quota) is full, found behind whatever wrapped
it: the run stops there, says which folder needs space, and resumes once it has some."""

from __future__ import annotations

import errno

from agentflow_eval.files.os_error_chain import os_error_in

__all__ = ["disk_full_in"]

_FULL = {errno.ENOSPC, errno.EDQUOT}


def disk_full_in(exc: BaseException) -> OSError | None:
    """The "no space left" (or "quota exceeded") error behind ``exc``: itself, its causes
    and contexts, or inside an exception group; ``None`` for anything else."""
    return os_error_in(exc, _FULL)
