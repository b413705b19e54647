"""Rate limits backed by Prefect global concurrency limits: checked before a run starts,
and shared by separate runs on one Prefect server."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate

from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.config import EvalConfig, ModelRateLimit
from agentflow_eval.tasks.support.rate_limits import (
    PrefectLimitError,
    PrefectSharedLimits,
    prefect_rate_limiter,
)
from agentflow_eval.testing import Reply, ScriptedOpenAIServer


@dataclass
class InFlight:
    """Server handler counting requests in flight."""

    lock: threading.Condition = field(default_factory=threading.Condition)
    now: int = 0
    peak: int = 0
    total: int = 0
    overlap: int = 2
    """A request waits (up to a second) for this many in flight before it answers, so the
    peak measures what the limits let through, not how fast a loaded machine starts
    requests."""

    def __call__(self, request: dict[str, Any]) -> Reply:
        with self.lock:
            self.now += 1
            self.total += 1
            self.peak = max(self.peak, self.now)
            self.lock.notify_all()
            self.lock.wait_for(lambda: self.now >= self.overlap, timeout=1.0)
        try:
            threading.Event().wait(0.05)
            return Reply.text("ok")
        finally:
            with self.lock:
                self.now -= 1


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as running:
        yield running


async def create_limit(name: str, limit: int, decay: float | None = None) -> None:
    async with get_client() as client:
        await client.create_global_concurrency_limit(
            GlobalConcurrencyLimitCreate(name=name, limit=limit, slot_decay_per_second=decay or 0.0)
        )


def config(**limits: ModelRateLimit) -> EvalConfig:
    return EvalConfig(rate_limits={f"openai/{k}*": v for k, v in limits.items()})


async def test_a_config_without_prefect_limits_needs_no_server_round_trip() -> None:
    limiter = await prefect_rate_limiter(config(a=ModelRateLimit(rpm=60)))
    assert limiter.shared is None


async def test_an_unknown_prefect_limit_is_refused_before_any_call() -> None:
    with pytest.raises(PrefectLimitError, match=r"no global concurrency limit named 'nope'"):
        await prefect_rate_limiter(config(a=ModelRateLimit(prefect_limit="nope")))


async def test_a_rate_limit_needs_a_slot_decay() -> None:
    await create_limit("no-decay", 5)
    with pytest.raises(PrefectLimitError, match=r"'no-decay' has no slot decay"):
        await prefect_rate_limiter(config(a=ModelRateLimit(prefect_rate_limit="no-decay")))


async def test_two_runs_share_one_prefect_quota(server: ScriptedOpenAIServer) -> None:
    await create_limit("shared-quota", 2)
    counter = InFlight()
    server.handler = counter
    settings = config(quota=ModelRateLimit(prefect_limit="shared-quota"))
    # two runs, each with its own limiter and no in-process cap
    limiters = [await prefect_rate_limiter(settings) for _ in range(2)]
    assert all(isinstance(lim.shared, PrefectSharedLimits) for lim in limiters)

    async def run(limiter_index: int) -> None:
        async def call(models: ModelClient) -> None:
            await models.complete(
                model="openai/quota-model",
                messages=[{"role": "user", "content": "hi"}],
                api_base=server.url,
                api_key="test",
            )

        async with ModelClient(limiters[limiter_index]) as models:
            await asyncio.gather(*(call(models) for _ in range(5)))

    await asyncio.gather(run(0), run(1))
    assert counter.total == 10
    assert counter.peak == 2  # the server-side quota held across both runs
