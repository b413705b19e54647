"""An operating system's error found behind whatever wrapped it: the exception itself, its
causes and contexts, or inside an exception group. A run stops on a few of them (a full
disk, no file descriptors left) with one line saying what to do, however deep in a
library's or Prefect's exception the error arrived."""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["os_error_in"]


def os_error_in(exc: BaseException, errnos: Collection[int]) -> OSError | None:
    """The ``OSError`` behind ``exc`` whose ``errno`` is one of ``errnos``; ``None`` when
    there is none."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in errnos:
            return current
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None
