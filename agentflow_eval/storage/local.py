"""A folder on this machine as an object store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from agentflow_eval.errors import StoreError
from agentflow_eval.files.atomic import write_bytes_atomically
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
