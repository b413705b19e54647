"""One object, or one folder of objects, in a store, named by what a user writes: a path on
this machine, a ``file://`` URL, ``s3://bucket/key``, or a URL in a registered store's
scheme. Baseline lookup and ``compare`` read runs through these; the text is parsed by
:func:`~.targets.parse_target`, as a publish target is."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from agentflow_eval.models.request import S3Options
from agentflow_eval.storage.base import ObjectStore, ReadableStream, StreamingStore
from agentflow_eval.storage.stores import open_store
from agentflow_eval.storage.targets import LocalTarget, S3Credentials, S3Target, target_of

__all__ = ["LocalLocation", "Location", "StoreLocation", "locate"]


class Location(Protocol):
    """Where one object (or a folder of them) is."""

    @property
    def where(self) -> str:
        """The location as a person would write it."""
        ...

    def child(self, name: str) -> Location: ...

    def get(self) -> bytes | None:
        """The object's bytes, or None when there is none."""
        ...

    def open(self) -> ReadableStream | None:
        """The object as a stream to read (the caller closes it), or None."""
        ...

    def is_folder(self) -> bool: ...


@dataclass(frozen=True)
class LocalLocation:
    """A path on this machine, taken as written (it need not be a safe object key)."""

    path: Path

    @property
    def where(self) -> str:
        return str(self.path)

    def child(self, name: str) -> LocalLocation:
        return LocalLocation(self.path / name)

    def get(self) -> bytes | None:
        return self.path.read_bytes() if self.path.is_file() else None

    def open(self) -> BinaryIO | None:
        return self.path.open("rb") if self.path.is_file() else None

    def is_folder(self) -> bool:
        return self.path.is_dir()


@dataclass(frozen=True)
class StoreLocation:
    """A key in a store, below the store's root (``root`` as a person writes it:
    ``s3://bucket``)."""

    store: ObjectStore
    root: str
    key: str

    @property
    def where(self) -> str:
        return f"{self.root}/{self.key}".rstrip("/")

    def child(self, name: str) -> StoreLocation:
        return StoreLocation(self.store, self.root, f"{self.key}/{name}" if self.key else name)

    def get(self) -> bytes | None:
        return self.store.get(self.key)

    def open(self) -> ReadableStream | None:
        if isinstance(self.store, StreamingStore):
            return self.store.open(self.key)
        body = self.store.get(self.key)
        return io.BytesIO(body) if body is not None else None

    def is_folder(self) -> bool:
        return not self.key.endswith(".json")


def locate(
    spec: str | Path, s3: S3Options | None = None, credentials: S3Credentials | None = None
) -> Location:
    """The location ``spec`` names; ``s3`` and ``credentials`` reach an S3-compatible
    store. Raises ``ValueError`` for a scheme no store is registered for, and for an
    ``s3://`` key that is not made of safe segments."""
    target = target_of(spec, s3, credentials)
    if isinstance(target, LocalTarget):
        return LocalLocation(target.path)
    if isinstance(target, S3Target):
        root = target.model_copy(update={"prefix": ""})
        return StoreLocation(open_store(root), f"s3://{target.bucket}", target.prefix)
    return StoreLocation(open_store(target.root()), target.root().url, target.key)
