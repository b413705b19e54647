"""Append-only JSON-lines files: how finished trials stream to disk.

Each record is written and flushed as soon as it exists, so a crash loses nothing that
finished; a torn last line (the process died mid-write) is cut off on the next open. A
file is never appended to (or cut) through a symbolic link in its place
(:mod:`agentflow_eval.files.no_follow`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO, Generic, TypeVar

from pydantic import BaseModel

from agentflow_eval.files.no_follow import open_no_follow

__all__ = [
    "JsonlWriter",
    "iter_lines_with_offsets",
    "iter_records",
    "open_for_append",
    "read_line_at",
    "repair_tail",
]

M = TypeVar("M", bound=BaseModel)


class JsonlWriter(Generic[M]):
    """Appends pydantic records to a JSONL file, one flushed line each."""

    def __init__(self, path: Path, *, fsync: bool = False) -> None:
        self.path = path
        self._fsync = fsync
        path.parent.mkdir(parents=True, exist_ok=True)
        repair_tail(path)
        self._file: IO[str] = os.fdopen(open_for_append(path), "a", encoding="utf-8")

    def write(self, record: M) -> None:
        self._file.write(record.model_dump_json() + "\n")
        self._file.flush()
        if self._fsync:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> JsonlWriter[M]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_records(path: Path, model: type[M]) -> Iterator[M]:
    """Read records back one at a time (constant memory). A torn last line is skipped."""
    if not path.exists():
        return
    with path.open("r", encoding="utf-8") as handle:
        for line in handle:
            if not line.endswith("\n"):
                return  # torn tail: written by a process that died mid-line
            if line.strip():
                yield model.model_validate_json(line)


def iter_raw(path: Path) -> Iterator[dict[str, Any]]:
    """Like :func:`iter_records`, as plain dicts."""
    if not path.exists():
        return
    with path.open("r", encoding="utf-8") as handle:
        for line in handle:
            if not line.endswith("\n"):
                return
            if line.strip():
                yield json.loads(line)


def iter_lines_with_offsets(path: Path) -> Iterator[tuple[int, bytes]]:
    """Each record line with the byte offset it starts at, read exactly as
    :func:`iter_records` reads them (blank lines skipped, a torn last line left out), so a
    reader can keep the offsets instead of the records and seek back to one later."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        offset = 0
        for line in handle:
            if not line.endswith(b"\n"):
                return  # torn tail: written by a process that died mid-line
            if line.strip():
                yield offset, line
            offset += len(line)


def read_line_at(handle: BinaryIO, offset: int) -> bytes:
    """The line that starts at byte ``offset`` of an open binary file (as found by
    :func:`iter_lines_with_offsets`)."""
    handle.seek(offset)
    line = handle.readline()
    if not line.endswith(b"\n"):
        raise ValueError(f"{getattr(handle, 'name', 'file')}: no complete line at byte {offset}")
    return line


def open_for_append(path: Path) -> int:
    """A descriptor appending to ``path`` (made if missing), never through a link."""
    return open_no_follow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)


def repair_tail(path: Path) -> None:
    """Cut a torn last line off ``path`` so appends start on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with os.fdopen(open_no_follow(path, os.O_RDWR), "rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 1))
        if handle.read(1) == b"\n":
            return
        # find the last newline and truncate after it
        block = 65536
        pos = size
        while pos > 0:
            start = max(0, pos - block)
            handle.seek(start)
            chunk = handle.read(pos - start)
            idx = chunk.rfind(b"\n")
            if idx != -1:
                handle.truncate(start + idx + 1)
                return
            pos = start
        handle.truncate(0)
