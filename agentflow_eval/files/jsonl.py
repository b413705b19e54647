"""Append-only JSON-lines files: how finished trials stream to disk.

Each record is written and flushed as soon as it exists, so a crash loses nothing that
finished; a torn last line (the process died mid-write) is cut off on the next open. A
file is never appended to (or cut) through a symbolic link in its place
(:mod:`agentflow_eval.files.no_follow`).

Read back, each line is held to every file's limits (:mod:`.limits`: its size, nesting
and numbers), and a line that breaks one, or is not a record, is refused naming the file
and the line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from agentflow_eval.files.limits import (
    MAX_FILE_BYTES,
    UnreadableFile,
    not_a,
    parse_json,
    size_text,
    validate_json,
)
from agentflow_eval.files.no_follow import open_no_follow

__all__ = [
    "JsonlWriter",
    "check_records",
    "iter_lines_with_offsets",
    "iter_raw",
    "iter_records",
    "open_for_append",
    "parse_record",
    "read_line_at",
    "repair_tail",
    "validate_record",
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


def _where(path: Path, place: str) -> str:
    return f"{path} ({place})"


def _within_size(line: bytes | str, source: str) -> None:
    if len(line) > MAX_FILE_BYTES:
        raise UnreadableFile(
            source, f"a line of more than the {size_text(MAX_FILE_BYTES)} a record may be"
        )


def _lines(handle: BinaryIO, path: Path) -> Iterator[tuple[int, bytes]]:
    """Each line of ``handle`` with its number, none read past the size a record may be
    (the last one may lack its newline)."""
    number = 0
    while line := handle.readline(MAX_FILE_BYTES + 1):
        number += 1
        _within_size(line, _where(path, f"line {number}"))
        yield number, line


def parse_record(line: bytes | str, path: Path, place: str) -> dict[str, Any]:
    """The JSON object on ``line`` of the file at ``path`` (``place``: which line, for
    errors), within every file's limits. Raises :class:`UnreadableFile`."""
    source = _where(path, place)
    _within_size(line, source)
    record = parse_json(line, source)
    if not isinstance(record, dict):
        raise UnreadableFile(source, f"expected a JSON object, found {type(record).__name__}")
    return record


def validate_record(line: bytes | str, model: type[M], path: Path, place: str) -> M:
    """``line`` of the file at ``path`` read as ``model`` (``place``: which line, for
    errors). Raises :class:`UnreadableFile`, naming the first problem."""
    return validate_json(model, line, _where(path, place))


def iter_records(path: Path, model: type[M]) -> Iterator[M]:
    """Read records back one at a time (constant memory). A torn last line is skipped;
    a line that is not a ``model`` is refused (:func:`validate_record`)."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, line in _lines(handle, path):
            if not line.endswith(b"\n"):
                return  # torn tail: written by a process that died mid-line
            if line.strip():
                yield validate_record(line, model, path, f"line {number}")


def check_records(path: Path, model: type[M]) -> Iterator[dict[str, Any]]:
    """Each record of ``path`` as :func:`iter_raw` reads it, each also checked to be a
    ``model``: a folder read back (a resume, a re-judge) is refused at once, naming the
    line, rather than by the stage that would meet the line later."""
    for place, record in _placed_records(path):
        try:
            model.model_validate(record)
        except ValidationError as exc:
            raise not_a(model, exc, _where(path, place)) from None
        yield record


def iter_raw(path: Path) -> Iterator[dict[str, Any]]:
    """Like :func:`iter_records`, as plain dicts (:func:`parse_record`)."""
    for _, record in _placed_records(path):
        yield record


def _placed_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each record of ``path`` as a plain dict, with the line it was read from."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, line in _lines(handle, path):
            if not line.endswith(b"\n"):
                return  # torn tail: written by a process that died mid-line
            if line.strip():
                place = f"line {number}"
                yield place, parse_record(line, path, place)


def iter_lines_with_offsets(path: Path) -> Iterator[tuple[int, bytes]]:
    """Each record line with the byte offset it starts at, read exactly as
    :func:`iter_records` reads them (blank lines skipped, a torn last line left out), so a
    reader can keep the offsets instead of the records and seek back to one later."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        offset = 0
        for _, line in _lines(handle, path):
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
