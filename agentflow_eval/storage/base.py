"""The store interface: what publishing, baseline lookup, the runs history and the shared
judge cache read and write through, whatever is behind it (a folder, an S3-compatible
bucket, a Prefect storage block)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agentflow_eval.errors import StoreError

__all__ = ["ObjectStore", "ReadableStream", "StoreError", "StreamingStore"]


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
