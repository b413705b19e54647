"""Which trace objects were read before, kept in the store results go to, so every object
is read once however many runs read the prefix, at the same time or one after another.

A run claims an object before it reads it by creating its marker,
``<cursor>/done/<hh>/<sha256 of the key>``, only where none is
(:meth:`~agentflow_eval.storage.base.ListingStore.create`: a folder links it into place,
S3 puts it with ``If-None-Match: *``): of two runs racing for an object exactly one reads
it. The marker's body names the batch that claimed it and when, so a batch that stopped
(a crash, a Prefect retry) goes on with the objects it had claimed.

A run lists the markers once, keeping each as eight bytes in a sorted array (a million
objects read: eight megabytes), then streams the prefix's listing and claims the objects
not in it. Objects are taken as written once, as the Collector's S3 exporter and the
file exporter's rotated files are: one changed after it was read is not read again.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from agentflow_eval.storage.base import ListingStore

__all__ = ["Claim", "Cursor", "ReadBefore"]

_DONE = "done"


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class ReadBefore:
    """The objects claimed before this run started: a sorted array of eight bytes each."""

    def __init__(self, digests: Iterable[str]) -> None:
        values = array("Q", (int(digest[:16], 16) for digest in digests))
        self._values = array("Q", sorted(values))

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        value = int(_digest(key)[:16], 16)
        at = bisect_left(self._values, value)
        return at < len(self._values) and self._values[at] == value


@dataclass(frozen=True)
class Claim:
    """A marker's body: the batch that claimed the object, and when."""

    key: str
    batch: str
    at: str

    def body(self) -> bytes:
        return json.dumps({"key": self.key, "batch": self.batch, "at": self.at}).encode()


@dataclass(frozen=True)
class Cursor:
    """The markers of one source, under ``prefix`` in ``store``."""

    store: ListingStore
    prefix: str

    def _marker(self, key: str) -> str:
        digest = _digest(key)
        return f"{self.prefix}/{_DONE}/{digest[:2]}/{digest}"

    def read_before(self) -> ReadBefore:
        """Every object claimed so far (one listing of the markers)."""
        folder = f"{self.prefix}/{_DONE}/"
        return ReadBefore(
            stored.key.rsplit("/", 1)[-1]
            for stored in self.store.list_objects(folder)
            if len(stored.key.rsplit("/", 1)[-1]) == 32
        )

    def claim(self, key: str, batch: str) -> bool:
        """Claim ``key`` for ``batch``: True when this call made its marker."""
        claim = Claim(key=key, batch=batch, at=datetime.now(UTC).isoformat())
        return self.store.create(self._marker(key), claim.body(), "application/json")

    def claimed_by(self, key: str) -> str | None:
        """The batch that claimed ``key``, if any."""
        body = self.store.get(self._marker(key))
        if body is None:
            return None
        try:
            return str(json.loads(body)["batch"])
        except (ValueError, KeyError, TypeError):
            return None
