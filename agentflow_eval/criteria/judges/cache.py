"""The judge cache: judge replies stored by a key over everything that shaped them.

:func:`judge_cache_key` hashes the criterion, the prompt template's identity (name,
version and source hash), the judge model and its options, the rendered prompt and the
sample index. A cache maps that key to the judge's reply (:class:`CachedJudgeReply`), its
text redacted of secrets before it is stored (the judge runtime's ``_to_store``); the reply
is parsed again on a hit, so a verdict is never stored apart from the text it came from.

:class:`JudgeCache` is the protocol the judge runtime talks to. :class:`InMemoryJudgeCache`
implements it in a dict (unit tests, one-off runs); :class:`StoreJudgeCache` in any object
store (:mod:`agentflow_eval.storage`: a folder, an S3-compatible bucket, or the Prefect
storage block a pool shares), so a cache outlives the process and is shared by workers.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from agentflow_eval.files.limits import UnreadableFile, validate_json
from agentflow_eval.models.results import Usage
from agentflow_eval.storage.base import ObjectStore
from agentflow_eval.storage.keys import join_key

__all__ = [
    "DEFAULT_PREFIX",
    "CachedJudgeReply",
    "InMemoryJudgeCache",
    "JudgeCache",
    "StoreJudgeCache",
    "judge_cache_key",
]

DEFAULT_PREFIX = "agentflow-judge-cache"
"""Where a store keeps judge replies: ``<prefix>/<key>.json``."""

log = logging.getLogger(__name__)

KEY_SCHEMA = "agentflow-judge-cache/1"
"""Bumped when the key's recipe changes, so old entries stop matching."""


def judge_cache_key(
    *,
    criterion: str,
    template: str,
    model: str,
    options: Mapping[str, Any],
    prompt: str,
    sample_index: int,
) -> str:
    """The sha256 hex key of one judge sample.

    ``template`` is the template identity (``PromptTemplate.identity``); ``options`` the
    judge options that change what the model says (temperature, seed, max_tokens, ...).
    """
    material = {
        "schema": KEY_SCHEMA,
        "criterion": criterion,
        "template": template,
        "model": model,
        "options": dict(sorted(options.items())),
        "prompt": prompt,
        "sample_index": sample_index,
    }
    encoded = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encoded.encode()).hexdigest()


class CachedJudgeReply(BaseModel):
    """A judge reply as stored: its text (secrets redacted), which model wrote it, and
    what it cost the first time (a hit costs nothing)."""

    model_config = ConfigDict(extra="forbid")

    content: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    latency_ms: float = 0.0
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


@runtime_checkable
class JudgeCache(Protocol):
    """Where judge replies are kept between calls (and, for persistent caches, runs).

    ``get`` returns ``None`` for a miss and raises when the store cannot be read; the
    judge runtime then warns, naming :attr:`location`, and asks the judge."""

    @property
    def location(self) -> str:
        """Where the entries are kept, for messages."""
        ...

    async def get(self, key: str) -> CachedJudgeReply | None:
        """The unexpired reply stored under ``key``, or ``None``."""
        ...

    async def put(
        self, key: str, reply: CachedJudgeReply, *, expires_in_s: float | None = None
    ) -> None:
        """Store ``reply`` under ``key``, replacing any entry; ``expires_in_s`` limits
        how long it may be served (``None``: forever)."""
        ...


class InMemoryJudgeCache:
    """A :class:`JudgeCache` in a dict: for tests and runs that need no persistence."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[CachedJudgeReply, datetime | None]] = {}
        self.gets = 0
        self.puts = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def location(self) -> str:
        return "memory"

    async def get(self, key: str) -> CachedJudgeReply | None:
        self.gets += 1
        entry = self._entries.get(key)
        if entry is None:
            return None
        reply, expires_at = entry
        if expires_at is not None and expires_at <= datetime.now(UTC):
            del self._entries[key]
            return None
        return reply

    async def put(
        self, key: str, reply: CachedJudgeReply, *, expires_in_s: float | None = None
    ) -> None:
        self.puts += 1
        expires_at = (
            None if expires_in_s is None else datetime.now(UTC) + timedelta(seconds=expires_in_s)
        )
        self._entries[key] = (reply, expires_at)


class _StoredEntry(BaseModel):
    """A judge reply as an object of the store: the reply and until when it is served."""

    model_config = ConfigDict(extra="forbid")

    reply: CachedJudgeReply
    expires_at: datetime | None = None


class StoreJudgeCache:
    """A :class:`JudgeCache` in an object store: one JSON object per judge sample under
    ``<prefix>/<key>.json``, with its expiry in it. The store's calls block (a disk, an
    HTTP request), so they run off the event loop."""

    def __init__(self, store: ObjectStore, *, prefix: str = DEFAULT_PREFIX) -> None:
        self._store = store
        self._prefix = prefix.strip("/")

    @property
    def location(self) -> str:
        return f"{self._store.describe()}/{self._prefix}"

    def _key(self, key: str) -> str:
        return join_key(*self._prefix.split("/"), f"{key}.json")

    async def get(self, key: str) -> CachedJudgeReply | None:
        raw = await asyncio.to_thread(self._store.get, self._key(key))
        if raw is None:
            return None
        try:
            entry = validate_json(_StoredEntry, raw, self._key(key))
        except UnreadableFile:
            log.warning("judge cache entry %s is not a judge reply; ignoring it", key)
            return None
        if entry.expires_at is not None and entry.expires_at <= datetime.now(UTC):
            return None
        return entry.reply

    async def put(
        self, key: str, reply: CachedJudgeReply, *, expires_in_s: float | None = None
    ) -> None:
        expires_at = (
            None if expires_in_s is None else datetime.now(UTC) + timedelta(seconds=expires_in_s)
        )
        body = _StoredEntry(reply=reply, expires_at=expires_at).model_dump_json().encode()
        await asyncio.to_thread(self._store.put, self._key(key), body, "application/json", None)
