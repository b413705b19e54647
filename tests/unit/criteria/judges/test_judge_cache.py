"""The judge cache: what its key covers, hits and misses counted on the server, refresh,
expiration, sharing of concurrent identical requests, and failures never cached."""

from __future__ import annotations

import asyncio
import dataclasses
import logging

import pytest
from judge_helpers import runtime, verdict
from pydantic import BaseModel

from agentflow_eval.criteria.judges.cache import (
    CachedJudgeReply,
    InMemoryJudgeCache,
    judge_cache_key,
)
from agentflow_eval.criteria.judges.prompt import PromptTemplate
from agentflow_eval.criteria.judges.runtime import (
    JudgeError,
    JudgeOptions,
    JudgeRequest,
    parse_json_reply,
)
from agentflow_eval.models.config import CriterionConfig
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

TEMPLATE = PromptTemplate(name="frm", version="1", source="Judge: {{ answer | fence('A') }}")


class Verdict(BaseModel):
    verdict: str


def parse(content: str) -> Verdict:
    return parse_json_reply(content, Verdict)


def ask(rt, template: PromptTemplate = TEMPLATE, sample: int = 0, **opts):
    options = JudgeOptions.resolve(CriterionConfig(**opts), rt.settings)
    prompt = template.render(answer="It is 72°F in New York.")
    return rt.ask(JudgeRequest("final_response_match_v2", template, prompt, options, sample), parse)


def test_the_key_covers_every_input():
    base = {
        "criterion": "c",
        "template": "t@1#abc",
        "model": "m",
        "options": {"temperature": 0.0, "seed": None},
        "prompt": "p",
        "sample_index": 0,
    }
    key = judge_cache_key(**base)
    assert key == judge_cache_key(**base) and len(key) == 64
    changes = {
        "criterion": "c2",
        "template": "t@2#abc",
        "model": "m2",
        "options": {"temperature": 0.5, "seed": None},
        "prompt": "p2",
        "sample_index": 1,
    }
    for field, value in changes.items():
        assert judge_cache_key(**{**base, field: value}) != key, field


async def test_a_second_run_with_the_same_key_makes_no_call(server: ScriptedOpenAIServer):
    cache = InMemoryJudgeCache()
    server.push(verdict("valid"))
    first = await ask(runtime(server, cache))
    second_rt = runtime(server, cache)
    second = await ask(second_rt)
    assert server.request_count == 1
    assert second.cached and second.value.verdict == first.value.verdict == "valid"
    assert second.usage.calls == 0 and second.usage.total_tokens == 0
    assert second_rt.stats.cache_hits == 1 and second_rt.stats.calls == 0


async def test_a_changed_template_misses(server: ScriptedOpenAIServer):
    cache = InMemoryJudgeCache()
    server.push(verdict("valid"), verdict("invalid"), verdict("valid"))
    await ask(runtime(server, cache))
    edited = dataclasses.replace(TEMPLATE, source=TEMPLATE.source + "\nReply in JSON.")
    reply = await ask(runtime(server, cache), template=edited)
    assert server.request_count == 2 and not reply.cached and reply.value.verdict == "invalid"
    # a version bump alone renders the same prompt, and still misses
    bumped = dataclasses.replace(TEMPLATE, version="2")
    assert bumped.render(answer="x") == TEMPLATE.render(answer="x")
    await ask(runtime(server, cache), template=bumped)
    assert server.request_count == 3


async def test_model_options_and_sample_index_are_part_of_the_key(server: ScriptedOpenAIServer):
    cache = InMemoryJudgeCache()
    server.handler = lambda _: verdict("valid")
    rt = runtime(server, cache)
    await ask(rt)
    await ask(rt, sample=1)
    await ask(rt, temperature=0.7)
    await ask(rt, judge_model="openai/other-judge")
    assert server.request_count == 4 and rt.stats.cache_hits == 0
    await ask(rt, temperature=0.7)
    assert server.request_count == 4 and rt.stats.cache_hits == 1


async def test_refresh_asks_again_and_replaces_the_entry(server: ScriptedOpenAIServer):
    cache = InMemoryJudgeCache()
    server.push(verdict("valid"), verdict("invalid"))
    await ask(runtime(server, cache))
    refreshed = await ask(runtime(server, cache, refresh_cache=True))
    assert server.request_count == 2 and not refreshed.cached
    later = await ask(runtime(server, cache))
    assert server.request_count == 2 and later.cached and later.value.verdict == "invalid"


async def test_a_disabled_cache_is_neither_read_nor_written(server: ScriptedOpenAIServer):
    cache = InMemoryJudgeCache()
    server.push(verdict("valid"), verdict("valid"))
    await ask(runtime(server, cache, cache=False))
    await ask(runtime(server, cache, cache=False))
    assert server.request_count == 2 and cache.gets == cache.puts == 0


async def test_entries_expire(server: ScriptedOpenAIServer):
    cache = InMemoryJudgeCache()
    server.push(verdict("valid"), verdict("valid"))
    await ask(runtime(server, cache, cache_expiration_s=0.2))
    await ask(runtime(server, cache, cache_expiration_s=0.2))
    assert server.request_count == 1
    await asyncio.sleep(0.3)
    await ask(runtime(server, cache, cache_expiration_s=0.2))
    assert server.request_count == 2


async def test_failures_are_not_cached(server: ScriptedOpenAIServer):
    cache = InMemoryJudgeCache()
    server.push(Reply.error(400), verdict("valid"))
    with pytest.raises(JudgeError):
        await ask(runtime(server, cache))
    assert len(cache) == 0
    reply = await ask(runtime(server, cache))
    assert server.request_count == 2 and not reply.cached


async def test_concurrent_identical_requests_share_one_call(server: ScriptedOpenAIServer):
    server.handler = lambda _: Reply.text('{"verdict": "valid"}', delay_s=0.1)
    rt = runtime(server, InMemoryJudgeCache())
    replies = await asyncio.gather(*(ask(rt) for _ in range(4)))
    assert server.request_count == 1
    assert [r.cached for r in replies].count(False) == 1
    assert rt.stats.calls == 1 and rt.stats.cache_hits == 3


async def test_an_unparseable_entry_is_asked_again(server: ScriptedOpenAIServer):
    cache = InMemoryJudgeCache()
    rt = runtime(server, cache)
    options = JudgeOptions.resolve(CriterionConfig(), rt.settings)
    prompt = TEMPLATE.render(answer="It is 72°F in New York.")
    key = JudgeRequest("final_response_match_v2", TEMPLATE, prompt, options).cache_key
    await cache.put(key, CachedJudgeReply(content="garbage", model="m"))
    server.push(verdict("valid"))
    reply = await ask(rt)
    assert server.request_count == 1 and reply.value.verdict == "valid"
    assert (await cache.get(key)).content == reply.content  # replaced


class BrokenCache:
    location = "LocalFileSystem(/mnt/judge-cache)"

    async def get(self, key: str) -> CachedJudgeReply | None:
        raise OSError("disk on fire")

    async def put(self, key: str, reply: CachedJudgeReply, *, expires_in_s=None) -> None:
        raise OSError("disk on fire")


async def test_a_broken_cache_costs_calls_not_verdicts_and_says_so_once(
    server: ScriptedOpenAIServer, caplog: pytest.LogCaptureFixture
):
    server.push(verdict("valid"), verdict("valid"))
    rt = runtime(server, BrokenCache())
    with caplog.at_level(logging.WARNING, logger="agentflow_eval.criteria.judges.runtime"):
        reply = await ask(rt)
        await ask(rt, sample=1)
    assert reply.value.verdict == "valid" and server.request_count == 2
    assert rt.stats.cache_errors == 4  # two reads, two writes
    ours = "agentflow_eval.criteria.judges.runtime"
    warnings = [r.getMessage() for r in caplog.records if r.name == ours]
    assert len(warnings) == 1
    assert "judge cache LocalFileSystem(/mnt/judge-cache) cannot be read" in warnings[0]
    assert "OSError: disk on fire" in warnings[0]


async def test_a_shared_failure_is_paid_for_once(server: ScriptedOpenAIServer):
    server.handler = lambda _: Reply.error(400, delay_s=0.1)
    rt = runtime(server, InMemoryJudgeCache())
    outcomes = await asyncio.gather(*(ask(rt) for _ in range(3)), return_exceptions=True)
    assert all(isinstance(o, JudgeError) and "HTTP 400" in o.reason for o in outcomes)
    assert server.request_count == 1 and rt.stats.failures == 1
    assert sorted(o.usage.calls for o in outcomes) == [0, 0, 1]


async def test_a_secret_in_the_judges_reply_is_never_stored(server: ScriptedOpenAIServer, tmp_path):
    """The judge quoted a key it saw in the answer: the cache keeps the reply redacted
    (as the trial's outputs are), and a hit still gives the verdict."""
    from agentflow_eval.criteria.judges.cache import StoreJudgeCache
    from agentflow_eval.storage.local import LocalStore

    key = "sk-live" + "0123456789abcdefXYZ"
    server.push(verdict("valid", reasoning=f"the answer leaks {key}"))
    first = await ask(runtime(server, StoreJudgeCache(LocalStore(tmp_path))))
    assert first.value.verdict == "valid"
    [entry] = list(tmp_path.rglob("*.json"))
    stored = entry.read_text()
    assert key not in stored and "[REDACTED]" in stored
    again = await ask(runtime(server, StoreJudgeCache(LocalStore(tmp_path))))
    assert again.cached and again.value.verdict == "valid" and server.request_count == 1
