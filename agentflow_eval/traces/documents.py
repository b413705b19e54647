"""One trace object (a file, an S3 object) as the OTLP JSON documents it holds, read as a
stream within limits.

The OpenTelemetry Collector writes traces as OTLP JSON in two layouts this reads: its
file exporter appends one ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``)
a line (and rotates the file into timestamped backups); its S3 exporter puts one request
an object, under ``year=YYYY/month=MM/day=DD/hour=HH/minute=mm/`` partitions. Either may
be gzipped (``.gz``). An export written by hand with indentation (a pretty-printed
document, its first line ``{`` alone) is read whole.

Nothing here raises for what the object holds: a line that is not JSON, is nested past
what a parser can take, or is larger than the limit becomes a :class:`Unreadable` naming
its line, and the next line is read.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentflow_eval.storage.base import ReadableStream

__all__ = ["Document", "Unreadable", "documents_of"]

_CHUNK = 1 << 16


@dataclass(frozen=True)
class Document:
    """A JSON document of the object: where it starts (line, counted from 1)."""

    line: int
    value: Any


@dataclass(frozen=True)
class Unreadable:
    """A part of the object that is not a JSON document, and why."""

    line: int
    reason: str


def documents_of(
    stream: ReadableStream, *, gzipped: bool, max_bytes: int
) -> Iterator[Document | Unreadable]:
    """The documents of an object read from ``stream`` (gunzipped when ``gzipped``): a
    document a line, or the whole object when it is one pretty-printed document. A line
    (or a whole document) longer than ``max_bytes`` is skipped unread past its limit."""
    unpacked = _Gunzipped(stream) if gzipped else None
    lines = _lines(unpacked if unpacked is not None else stream, max_bytes)
    number = 0
    first = next(lines, None)
    if first is not None:
        number, text, too_long = first
        if not too_long and text.strip() in (b"{", b"["):  # an indented document: whole
            yield _whole(number, text, lines, max_bytes)
        else:
            yield _document(number, text, too_long, max_bytes)
            for number, text, too_long in lines:
                yield _document(number, text, too_long, max_bytes)
    if unpacked is not None and unpacked.broken is not None:
        yield Unreadable(number + 1, f"not gzip, or cut short ({unpacked.broken})")


def _document(number: int, text: bytes, too_long: bool, max_bytes: int) -> Document | Unreadable:
    if too_long:
        return Unreadable(number, f"longer than {max_bytes:,} bytes: not read")
    return _parsed(number, text)


def _whole(
    number: int, first: bytes, lines: Iterator[tuple[int, bytes, bool]], max_bytes: int
) -> Document | Unreadable:
    parts, size = [first], len(first)
    for _, text, too_long in lines:
        size += len(text) + 1
        if too_long or size > max_bytes:
            for _ in lines:  # the rest is not read into memory
                pass
            return Unreadable(number, f"a document longer than {max_bytes:,} bytes: not read")
        parts.append(text)
    return _parsed(number, b"\n".join(parts))


def _parsed(number: int, text: bytes) -> Document | Unreadable:
    try:
        return Document(number, json.loads(text))
    except RecursionError:
        return Unreadable(number, "nested too deep to read")
    except UnicodeDecodeError:
        return Unreadable(number, "not UTF-8 text")
    except json.JSONDecodeError as exc:
        return Unreadable(number, f"not JSON ({exc.msg} at column {exc.colno}): truncated?")


def _lines(stream: ReadableStream, max_bytes: int) -> Iterator[tuple[int, bytes, bool]]:
    """``(line number, line, too long)`` for each non-blank line; a line past
    ``max_bytes`` is not kept (its first bytes are dropped as they come)."""
    pending = bytearray()
    too_long = False
    number = 1
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not too_long:
                pending += piece
                if len(pending) > max_bytes:
                    too_long = True
                    pending.clear()
            if end < 0:
                break
            if too_long or pending.strip():
                yield number, bytes(pending), too_long
            pending.clear()
            too_long = False
            number += 1
            start = end + 1
    if too_long or pending.strip():
        yield number, bytes(pending), too_long


class _Gunzipped:
    """A gzipped stream read as its content; a stream that is not gzip (or is cut short)
    reads as what could be unpacked, then ends."""

    def __init__(self, stream: ReadableStream) -> None:
        self._file = gzip.GzipFile(fileobj=_Raw(stream), mode="rb")
        self.broken: str | None = None

    def read(self, size: int = -1, /) -> bytes:
        if self.broken is not None:
            return b""
        try:
            return self._file.read(size)
        except (OSError, EOFError, zlib.error) as exc:
            self.broken = str(exc) or type(exc).__name__
            return b""

    def close(self) -> None:
        self._file.close()


class _Raw(io.RawIOBase):
    """A :class:`ReadableStream` as the file object :class:`gzip.GzipFile` reads."""

    def __init__(self, stream: ReadableStream) -> None:
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
