"""The store interface: what publishing, baseline lookup, the runs history and the shared
judge cache read and write through, whatever is behind it (a folder, an S3-compatible
bucket, a Prefect storage block)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from agentflow_eval.errors import StoreError

__all__ = [
    "ListingStore",
    "ObjectStore",
    "ReadableStream",
    "StoreError",
    "StoredObject",
    "StreamingStore",
]


class ReadableStream(Protocol):
    """An object's body being read: a file, or an S3 body that downloads only what is
    read."""

    def read(self, size: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


@runtime_checkable
class ObjectStore(Protocol):
    """Objects under keys relative to the store's root (a folder, a bucket's prefix).
    Folders and S3 are built in; anything with these methods can be passed wherever a
    store is taken."""

    def describe(self) -> str: ...

    def put(self, key: str, body: bytes, content_type: str, cache_control: str | None) -> None:
        """Store ``body`` at ``key`` with its Content-Type; raise :class:`StoreError`."""
        ...

    def get(self, key: str) -> bytes | None:
        """The object at ``key``, or None when there is none; raise :class:`StoreError`."""
        ...

    def url(self, key: str) -> str:
        """Where a person or a link opens the object at ``key``."""
        ...


@runtime_checkable
class StreamingStore(ObjectStore, Protocol):
    """A store that can also hand out an object as a stream, so a large one (a run's
    results.json read for a comparison) is not read into memory first."""

    def open(self, key: str) -> ReadableStream | None:
        """The object at ``key`` to read (the caller closes it), or None when there is
        none; raise :class:`StoreError`."""
        ...


@dataclass(frozen=True)
class StoredObject:
    """One object a listing found: its key below the store's root, as the store names it
    (any characters the store allows, unlike the keys this package makes), its size and
    when it was last written."""

    key: str
    size: int
    modified: datetime


@runtime_checkable
class ListingStore(StreamingStore, Protocol):
    """A store that can also list what is under a prefix, open what it listed, and create
    an object only where there is none yet — what reading a prefix of production traces
    once, and only once across concurrent runs, needs (:mod:`agentflow_eval.traces`)."""

    def list_objects(self, prefix: str = "") -> Iterator[StoredObject]:
        """Every object whose key starts with ``prefix`` (keys relative to the store's
        root), streamed a page at a time; raise :class:`StoreError`."""
        ...

    def open_listed(self, key: str) -> ReadableStream | None:
        """The object at ``key`` as :meth:`list_objects` named it, to read as a stream, or
        None when it is gone; raise :class:`StoreError`."""
        ...

    def create(self, key: str, body: bytes, content_type: str) -> bool:
        """Store ``body`` at ``key`` only if no object is there: True when this call made
        it, False when one was there already (whoever made it, however recently). Two
        callers racing for one key never both get True. Raise :class:`StoreError`."""
        ...
