"""The judge cache: judge replies stored by a key over everything that shaped them.

:func:`judge_cache_key` hashes the criterion, the prompt template's identity (name,
version and source hash), the judge model and its options, the rendered prompt and the
sample index. A cache maps that key to the judge's raw reply (:class:`CachedJudgeReply`);
the reply is parsed again on a hit, so a verdict is never stored apart from the text it
came from.

:class:`JudgeCache` is the protocol the judge runtime talks to. :class:`InMemoryJudgeCache`
implements it in a dict (unit tests, one-off runs); ``tasks/support/judge_cache.py`` implements it
on Prefect's result storage so a cache outlives the process.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from agentflow_eval.models.results import Usage

__all__ = [
    "CachedJudgeReply",
    "InMemoryJudgeCache",
    "JudgeCache",
    "judge_cache_key",
]

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
    """A judge reply as stored: the raw text, which model wrote it, and what it cost the
    first time (a hit costs nothing)."""

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
