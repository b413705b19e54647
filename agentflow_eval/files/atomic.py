"""Writing report files whole or not at all: text goes to a temporary file beside the
target and is renamed over it at the end, so a reader (a browser, a publisher, CI) never
sees half a report, however many pieces it was written in."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["atomic_text_file", "write_bytes_atomically", "write_text_atomically"]


@contextmanager
def _replacing(path: Path) -> Iterator[tuple[int, Path]]:
    """A new temporary file beside ``path`` (its descriptor and path), renamed over
    ``path`` when the block ends without an error and removed when it does not. It gets
    the permissions a new file would (the umask applies), so a published report stays as
    readable as the run folder's own files."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        yield fd, tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_text_file(path: Path) -> Iterator[IO[str]]:
    """A UTF-8 text file that replaces ``path`` when the block ends without an error
    (and is removed when it does not), with the permissions a new file gets."""
    with _replacing(path) as (fd, _), os.fdopen(fd, "w", encoding="utf-8") as handle:
        yield handle


def write_bytes_atomically(path: Path, body: bytes) -> Path:
    """Write ``body`` to ``path`` whole or not at all (see :func:`atomic_text_file`);
    returns the path."""
    with _replacing(path) as (fd, _), os.fdopen(fd, "wb") as handle:
        handle.write(body)
    return path


def write_text_atomically(path: Path, pieces: Iterable[str]) -> Path:
    """Write ``pieces`` one after another to ``path`` (see :func:`atomic_text_file`);
    returns the path."""
    with atomic_text_file(path) as handle:
        for piece in pieces:
            handle.write(piece)
    return path
