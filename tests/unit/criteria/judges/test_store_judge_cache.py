"""The judge cache in an object store: one JSON object per judge sample, with its expiry;
a miss, an expired entry and an entry that is not a judge reply all read as a miss, and a
store that fails is an error the judge runtime reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentflow_eval.criteria.judges.cache import CachedJudgeReply, StoreJudgeCache
from agentflow_eval.errors import StoreError
from agentflow_eval.models.results import Usage
from agentflow_eval.storage.local import LocalStore

KEY = "ab" * 32
REPLY = CachedJudgeReply(
    content='{"verdict": "valid"}', model="openai/judge", usage=Usage(total_tokens=7, calls=1)
)


async def test_a_reply_is_kept_under_its_key_and_read_back(tmp_path: Path) -> None:
    cache = StoreJudgeCache(LocalStore(tmp_path))
    assert await cache.get(KEY) is None
    await cache.put(KEY, REPLY)
    assert await cache.get(KEY) == REPLY
    stored = json.loads((tmp_path / "agentflow-judge-cache" / f"{KEY}.json").read_text())
    assert stored["reply"]["content"] == REPLY.content and stored["expires_at"] is None
    assert cache.location == f"{tmp_path}/agentflow-judge-cache"
    # another cache on the same store (another process, another worker) reads it too
    assert await StoreJudgeCache(LocalStore(tmp_path)).get(KEY) == REPLY


async def test_an_expired_or_unreadable_entry_is_a_miss(tmp_path: Path) -> None:
    cache = StoreJudgeCache(LocalStore(tmp_path), prefix="judges/cache")
    await cache.put(KEY, REPLY, expires_in_s=-1)
    assert await cache.get(KEY) is None
    (tmp_path / "judges" / "cache" / f"{'cd' * 32}.json").write_text('{"not": "a reply"}')
    assert await cache.get("cd" * 32) is None


async def test_a_store_that_fails_raises_for_the_runtime_to_report(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder should be")
    cache = StoreJudgeCache(LocalStore(blocked))
    with pytest.raises(StoreError, match="cannot write"):
        await cache.put(KEY, REPLY)
