"""A folder on this machine as an object store."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from agentflow_eval.errors import StoreError
from agentflow_eval.files.atomic import write_bytes_atomically
from agentflow_eval.storage.base import StoredObject
from agentflow_eval.storage.keys import join_key

__all__ = ["LocalStore"]

_TRANSIENT_OS_ERRORS = (TimeoutError, BlockingIOError, InterruptedError)


@dataclass
class LocalStore:
    """A directory: files written atomically (a reader never sees half a file)."""

    root: Path

    def describe(self) -> str:
        return str(self.root)

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*join_key(*key.split("/")).split("/"))

    def put(self, key: str, body: bytes, content_type: str, cache_control: str | None) -> None:
        path = self._path(key)
        try:
            # the mode a new file gets (umask applied), as the run folder's own files
            write_bytes_atomically(path, body)
        except OSError as exc:
            raise StoreError(
                f"cannot write {path}: {exc}", transient=isinstance(exc, _TRANSIENT_OS_ERRORS)
            ) from exc

    def get(self, key: str) -> bytes | None:
        path = self._path(key)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(
                f"cannot read {path}: {exc}", transient=isinstance(exc, _TRANSIENT_OS_ERRORS)
            ) from exc

    def open(self, key: str) -> BinaryIO | None:
        """The object at ``key`` to read as a stream (the caller closes it), or None."""
        path = self._path(key)
        try:
            return path.open("rb")
        except (FileNotFoundError, IsADirectoryError):
            return None
        except OSError as exc:
            raise StoreError(
                f"cannot read {path}: {exc}", transient=isinstance(exc, _TRANSIENT_OS_ERRORS)
            ) from exc

    def url(self, key: str) -> str:
        return self._path(key).resolve().as_uri()

    def list_objects(self, prefix: str = "") -> Iterator[StoredObject]:
        """Every file whose key (its path below the folder, ``/``-separated) starts with
        ``prefix``, in the keys' lexicographic order (as S3 lists them). Hidden files are
        left out: a name starting with ``.`` is a file :meth:`put` or :meth:`create` is
        still writing."""
        start, _, _ = prefix.rpartition("/")
        folder = self.root.joinpath(*start.split("/")) if start else self.root
        yield from self._walk(folder, f"{start}/" if start else "", prefix)

    def _walk(self, folder: Path, at: str, prefix: str) -> Iterator[StoredObject]:
        try:
            with os.scandir(folder) as found:
                # a folder sorts as its name and "/": the order of the keys below it
                entries = sorted(
                    (entry.name + "/" if entry.is_dir(follow_symlinks=False) else entry.name, entry)
                    for entry in found
                    if not entry.name.startswith(".")
                )
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise StoreError(f"cannot list {folder}: {exc}", transient=False) from exc
        for name, entry in entries:
            key = at + name
            if not (key.startswith(prefix) or prefix.startswith(key)):
                continue
            if name.endswith("/"):
                yield from self._walk(Path(entry.path), key, prefix)
                continue
            try:
                stat = entry.stat(follow_symlinks=False)
            except FileNotFoundError:  # removed since the folder was read
                continue
            yield StoredObject(
                key=key, size=stat.st_size, modified=datetime.fromtimestamp(stat.st_mtime, UTC)
            )

    def open_listed(self, key: str) -> BinaryIO | None:
        """The file :meth:`list_objects` named ``key``, to read as a stream, or None."""
        parts = key.split("/")
        if not key or key.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise StoreError(f"{key!r} is not a key below {self.root}", transient=False)
        try:
            return self.root.joinpath(*parts).open("rb")
        except (FileNotFoundError, IsADirectoryError):
            return None
        except OSError as exc:
            raise StoreError(
                f"cannot read {self.root / key}: {exc}",
                transient=isinstance(exc, _TRANSIENT_OS_ERRORS),
            ) from exc

    def create(self, key: str, body: bytes, content_type: str) -> bool:
        """Write ``body`` at ``key`` unless a file is there: the body is written beside it
        first and linked into place, which fails when the name exists, so a reader never
        sees half of it and two writers never both succeed."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(body)
                os.link(tmp, path)
            except FileExistsError:
                return False
            finally:
                Path(tmp).unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot write {path}: {exc}", transient=isinstance(exc, _TRANSIENT_OS_ERRORS)
            ) from exc
        return True
