"""The judge runtime against a scripted server on 127.0.0.1: retries (which, how many,
how long), parsing, the concurrency limit, usage. On the default transport: the judge's
calls fail and answer alike on both (tests/unit/llm/test_transport_contract.py)."""

from __future__ import annotations

import asyncio
import json

import pytest
from judge_helpers import KEY_ENV, ConcurrencyProbe, TimedScript, runtime, verdict
from pydantic import BaseModel

from agentflow_eval.criteria.judges.prompt import PromptTemplate
from agentflow_eval.criteria.judges.runtime import (
    JudgeError,
    JudgeOptions,
    JudgeOutputError,
    JudgeRequest,
    JudgeRuntime,
    parse_json_reply,
)
from agentflow_eval.llm.retry import ProviderAuthError
from agentflow_eval.models.config import CriterionConfig
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

TEMPLATE = PromptTemplate(name="t", version="1", source="{{ q }}")


class Verdict(BaseModel):
    verdict: str


def parse(content: str) -> Verdict:
    return parse_json_reply(content, Verdict)


def request(
    rt: JudgeRuntime, prompt: str = "is it valid?", sample: int = 0, **opts: object
) -> JudgeRequest:
    """A request for criterion "crit" with ``opts`` as its criterion config."""
    options = JudgeOptions.resolve(CriterionConfig(**opts), rt.settings)
    return JudgeRequest("crit", TEMPLATE, prompt, options, sample)


async def test_a_valid_reply_is_parsed_and_its_usage_recorded(server: ScriptedOpenAIServer):
    server.push(verdict("valid"))
    rt = runtime(server)
    reply = await rt.ask(request(rt), parse)
    assert reply.value.verdict == "valid"
    assert reply.attempts == 1 and not reply.cached
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (10, 5)
    assert reply.usage.total_tokens == 15 and reply.usage.calls == 1
    assert reply.usage.cost_usd == 0.0  # a local model has no price
    assert rt.stats.calls == 1 and rt.stats.retries == 0
    assert server.requests[0]["model"] == "judge"


async def test_options_reach_the_server_and_the_seed_moves_with_the_sample(
    server: ScriptedOpenAIServer,
):
    server.push(verdict("valid"), verdict("valid"))
    rt = runtime(server)
    for sample in (0, 1):
        await rt.ask(request(rt, sample=sample, temperature=0.3, seed=7, max_tokens=99), parse)
    bodies = server.requests
    assert [b["seed"] for b in bodies] == [7, 8]
    assert all(b["temperature"] == 0.3 and b["max_tokens"] == 99 for b in bodies)


async def test_429_is_retried_after_the_retry_after_header(server: ScriptedOpenAIServer):
    script = TimedScript(
        Reply.error(429, "slow down", headers={"Retry-After": "1"}), verdict("valid")
    )
    server.handler = script
    rt = runtime(server)
    reply = await rt.ask(request(rt), parse)
    assert reply.value.verdict == "valid" and reply.attempts == 2
    assert server.request_count == 2
    assert rt.stats.retries == 1 and rt.stats.calls == 2
    # the base backoff is 10 ms: only the header explains a one-second wait
    assert script.gaps()[0] >= 0.95


async def test_retry_after_ms_is_preferred_and_the_wait_is_capped(server: ScriptedOpenAIServer):
    script = TimedScript(
        Reply.error(429, headers={"retry-after-ms": "300", "Retry-After": "30"}),
        Reply.error(503, headers={"Retry-After": "30"}),
        verdict("valid"),
    )
    server.handler = script
    rt = runtime(server, retry_max_delay_s=0.5)
    reply = await rt.ask(request(rt), parse)
    assert reply.attempts == 3
    first, second = script.gaps()
    assert 0.28 <= first < 1.0  # 300 ms, not 30 s
    assert 0.45 <= second < 2.0  # 30 s asked, capped at retry_max_delay_s


@pytest.mark.parametrize("status", [500, 502, 503, 504, 408])
async def test_server_errors_are_retried(server: ScriptedOpenAIServer, status: int):
    server.push(Reply.error(status), verdict("invalid"))
    rt = runtime(server)
    reply = await rt.ask(request(rt), parse)
    assert reply.value.verdict == "invalid" and reply.attempts == 2
    assert rt.stats.retries == 1


async def test_a_timeout_is_retried(server: ScriptedOpenAIServer):
    server.push(Reply.text('{"verdict": "valid"}', delay_s=1.0))
    server.push(verdict("valid"))
    rt = runtime(server, timeout_s=0.3)
    reply = await rt.ask(request(rt), parse)
    assert reply.attempts == 2 and rt.stats.retries == 1


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors_stop_at_the_first_request(server: ScriptedOpenAIServer, status: int):
    server.handler = lambda _: Reply.error(status, "bad key")
    rt = runtime(server)
    with pytest.raises(ProviderAuthError, match=rf"authentication failed \(HTTP {status}\)"):
        await rt.ask(request(rt), parse)
    assert server.request_count == 1
    assert rt.stats.failures == 1 and rt.stats.retries == 0
    with pytest.raises(ProviderAuthError, match="refused before"):
        await rt.ask(request(rt, prompt="another question"), parse)
    assert server.request_count == 1  # not asked again


@pytest.mark.parametrize("status", [400, 404, 422])
async def test_bad_requests_are_not_retried(server: ScriptedOpenAIServer, status: int):
    server.push(Reply.error(status, "no such thing"))
    rt = runtime(server)
    with pytest.raises(JudgeError, match=rf"rejected the request \(HTTP {status}\)"):
        await rt.ask(request(rt), parse)
    assert server.request_count == 1


async def test_malformed_json_then_valid_is_retried(server: ScriptedOpenAIServer):
    server.push(Reply.text("I think it is valid."), Reply.text('{"verdict": '), verdict("valid"))
    rt = runtime(server)
    reply = await rt.ask(request(rt), parse)
    assert reply.value.verdict == "valid" and reply.attempts == 3
    assert rt.stats.retries == 2
    # the malformed answers were paid for too
    assert reply.usage.calls == 3 and reply.usage.prompt_tokens == 30


async def test_malformed_every_time_fails_with_the_reason(server: ScriptedOpenAIServer):
    server.handler = lambda _: Reply.text('{"verdict_missing": true}')
    rt = runtime(server, max_retries=2)
    with pytest.raises(JudgeError) as failed:
        await rt.ask(request(rt), parse)
    assert server.request_count == 3
    reason = failed.value.reason
    assert "malformed judge output" in reason and "verdict: Field required" in reason
    assert "3 attempts, retries exhausted" in reason
    assert failed.value.attempts == 3 and failed.value.usage.calls == 3


async def test_a_missing_api_key_variable_fails_without_a_request(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv(KEY_ENV)
    rt = runtime(server)
    with pytest.raises(JudgeError, match=KEY_ENV):
        await rt.ask(request(rt), parse)
    assert server.request_count == 0 and rt.stats.calls == 0


async def test_the_concurrency_limit_bounds_requests_in_flight(server: ScriptedOpenAIServer):
    probe = ConcurrencyProbe(lambda _: verdict("valid"), hold_s=0.1)
    server.handler = probe
    rt = runtime(server, max_concurrency=3)
    replies = await asyncio.gather(*(rt.ask(request(rt, prompt=f"p{i}"), parse) for i in range(10)))
    assert len(replies) == 10 and server.request_count == 10
    assert probe.max_in_flight == 3  # reached, never exceeded


def test_parse_json_reply_reads_fenced_and_wrapped_json():
    assert parse_json_reply('```json\n{"verdict": "a"}\n```', Verdict).verdict == "a"
    assert parse_json_reply('Sure: {"verdict": "b"} hope it helps', Verdict).verdict == "b"
    with pytest.raises(JudgeOutputError, match="found no JSON object"):
        parse_json_reply("no json here", Verdict)
    with pytest.raises(JudgeOutputError, match="invalid JSON"):
        parse_json_reply("{verdict: a}", Verdict)


async def test_requests_differing_only_in_sample_are_both_sent(server: ScriptedOpenAIServer):
    server.handler = lambda body: verdict("valid")
    rt = runtime(server)
    await asyncio.gather(rt.ask(request(rt, sample=0), parse), rt.ask(request(rt, sample=1), parse))
    assert server.request_count == 2
    assert json.loads(json.dumps(server.requests[0]["messages"])) == server.requests[1]["messages"]
