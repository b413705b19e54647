"""A write that failed because its disk (or quota) is full, found behind whatever wrapped
it: the run stops there, says which folder needs space, and resumes once it has some."""

from __future__ import annotations

import errno

__all__ = ["disk_full_in"]

_FULL = {errno.ENOSPC, errno.EDQUOT}


def disk_full_in(exc: BaseException) -> OSError | None:
    """The "no space left" (or "quota exceeded") error behind ``exc``: itself, its causes
    and contexts, or inside an exception group; ``None`` for anything else."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _FULL:
            return current
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None
