"""Per-model rate limits: rpm on a fake clock, concurrency caps counted at the server,
glob patterns, and one limiter shared by a run's agent and judge calls."""

from __future__ import annotations

import asyncio
import heapq
import threading
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.criteria.base import CriterionContext, scored
from agentflow_eval.criteria.registry import register
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.llm.ratelimit import RateLimiter, TokenBucket
from agentflow_eval.models.config import CriterionConfig, EvalConfig, ModelRateLimit
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.run.trials import run_trials
from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from tests.support.plans import make_plan

T = TypeVar("T")


class FakeClock:
    """Virtual time: ``sleep`` parks the caller until :meth:`drive` advances the clock to
    its wake-up time, which it does only when every task is waiting."""

    def __init__(self) -> None:
        self.t = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = 0

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> Awaitable[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.t + seconds, self._seq, future))
        self._seq += 1
        return future

    async def drive(self, work: Awaitable[T]) -> T:
        task = asyncio.ensure_future(work)
        while not task.done():
            for _ in range(50):  # let every runnable task reach its next wait
                await asyncio.sleep(0)
            if task.done() or not self._sleepers:
                continue
            wake, _, future = heapq.heappop(self._sleepers)
            self.t = max(self.t, wake)
            future.set_result(None)
        return task.result()


class RecordingClock:
    """A clock frozen at 0 whose ``sleep`` returns at once and records what was asked."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def now(self) -> float:
        return 0.0

    async def _noop(self) -> None:
        return None

    def sleep(self, seconds: float) -> Awaitable[None]:
        self.waits.append(seconds)
        return self._noop()


def max_in_window(times: list[float], window: float) -> int:
    ordered = sorted(times)
    best, low = 0, 0
    for high, t in enumerate(ordered):
        while t - ordered[low] >= window:
            low += 1
        best = max(best, high - low + 1)
    return best


# ---------------------------------------------------------------- requests per minute


async def test_rpm_spaces_requests_evenly_after_the_burst() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rpm=60, burst=1, clock=clock)
    starts: list[float] = []

    async def call() -> None:
        await bucket.acquire()
        starts.append(clock.now())

    await clock.drive(asyncio.gather(*(call() for _ in range(5))))
    assert starts == [0.0, 1.0, 2.0, 3.0, 4.0]


async def test_rpm_never_exceeds_rate_plus_burst_in_any_minute() -> None:
    clock = FakeClock()
    limiter = RateLimiter({"openai/*": ModelRateLimit(rpm=120)}, clock=clock)
    starts: list[float] = []

    async def call() -> None:
        async with limiter.slot("openai/gpt-4o-mini"):
            starts.append(clock.now())

    await clock.drive(asyncio.gather(*(call() for _ in range(300))))
    burst = limiter.budgets[0].bucket.burst  # type: ignore[union-attr]
    assert burst == 2  # default: one second's worth of requests
    assert max_in_window(starts, 60.0) <= 120 + burst
    # and it is a rate, not a stall: 300 requests at 2/s after a burst of 2
    assert max(starts) == pytest.approx((300 - burst) * 0.5)


async def test_rpm_lets_a_burst_start_at_once() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rpm=600, burst=5, clock=clock)
    starts: list[float] = []

    async def call() -> None:
        await bucket.acquire()
        starts.append(clock.now())

    await clock.drive(asyncio.gather(*(call() for _ in range(7))))
    assert starts[:5] == [0.0] * 5
    assert starts[5:] == pytest.approx([0.1, 0.2])


async def test_rpm_tokens_accumulate_while_idle_up_to_the_burst() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rpm=60, burst=3, clock=clock)
    await clock.drive(asyncio.gather(*(bucket.acquire() for _ in range(3))))
    clock.t = 100.0  # a long pause refills the bucket, but only to the burst size
    waits = [bucket.reserve() for _ in range(5)]
    assert waits == [0.0, 0.0, 0.0, 1.0, 2.0]


def test_bad_rpm_settings_are_rejected() -> None:
    with pytest.raises(ValueError, match="rpm must be positive, got 0"):
        TokenBucket(rpm=0)
    with pytest.raises(ValueError, match="burst must be at least 1, got 0"):
        TokenBucket(rpm=10, burst=0)


# ---------------------------------------------------------------- patterns


def test_glob_patterns_select_every_matching_budget() -> None:
    limiter = RateLimiter(
        {
            "openai/*": ModelRateLimit(max_concurrency=8),
            "*gpt-4o*": ModelRateLimit(rpm=100),
            "openai/gpt-4o-mini": ModelRateLimit(max_concurrency=2),
            "anthropic/*": ModelRateLimit(rpm=5),
        }
    )
    patterns = [b.pattern for b in limiter.budgets_for("openai/gpt-4o-mini")]
    assert patterns == ["*gpt-4o*", "openai/*", "openai/gpt-4o-mini"]
    assert [b.pattern for b in limiter.budgets_for("azure/gpt-4o")] == ["*gpt-4o*"]
    assert [b.pattern for b in limiter.budgets_for("OpenAI/gpt-4o-mini")] == ["*gpt-4o*"]
    assert limiter.budgets_for("mistral/large") == ()


def test_a_pattern_is_one_budget_for_all_the_models_it_matches() -> None:
    limiter = RateLimiter({"openai/*": ModelRateLimit(max_concurrency=4)})
    (mini,) = limiter.budgets_for("openai/gpt-4o-mini")
    (big,) = limiter.budgets_for("openai/gpt-4o")
    assert mini is big


async def test_an_unlimited_model_does_not_wait() -> None:
    clock = RecordingClock()
    limiter = RateLimiter({"openai/*": ModelRateLimit(rpm=1)}, clock=clock)
    for _ in range(3):
        async with limiter.slot("anthropic/claude"):
            pass
    assert clock.waits == []


def test_config_reads_rate_limits_in_either_case() -> None:
    config = EvalConfig.model_validate(
        {"rateLimits": {"openai/*": {"rpm": 500, "maxConcurrency": 8}}}
    )
    assert config.rate_limits["openai/*"] == ModelRateLimit(rpm=500, max_concurrency=8)
    with pytest.raises(ValueError, match="rpm"):
        EvalConfig.model_validate({"rate_limits": {"x": {"rpm": -1}}})


# ---------------------------------------------------------------- against a server


@dataclass
class InFlightCounter:
    """A server handler that counts requests in flight (the server is threaded)."""

    delay_s: float = 0.05
    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0
    peak: int = 0
    by_model: dict[str, int] = field(default_factory=dict)

    def __call__(self, request: dict[str, Any]) -> Reply:
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            model = request["model"]
            self.by_model[model] = self.by_model.get(model, 0) + 1
        try:
            threading.Event().wait(self.delay_s)
            return Reply.text("ok")
        finally:
            with self.lock:
                self.in_flight -= 1


@pytest.fixture
def counter(shared_server: ScriptedOpenAIServer) -> Iterator[InFlightCounter]:
    handler = InFlightCounter()
    shared_server.handler = handler
    shared_server.requests.clear()
    yield handler
    shared_server.handler = None


def evalset(cases: int) -> EvalSet:
    return EvalSet.model_validate(
        {
            "eval_set_id": "limits",
            "eval_cases": [
                {"eval_id": f"c{i}", "conversation": [{"user_content": "hi"}]} for i in range(cases)
            ],
        }
    )


async def test_max_concurrency_caps_requests_in_flight_at_the_server(
    shared_server: ScriptedOpenAIServer, counter: InFlightCounter, tmp_path: Path
) -> None:
    agent = LiteLLMAgent("openai/capped", api_base=shared_server.url, api_key="test")
    limiter = RateLimiter({"openai/cap*": ModelRateLimit(max_concurrency=3)})
    plan = make_plan(evalset(6), agent, tmp_path, runs=2, max_concurrency=12)
    async with ModelClient(limiter) as models:
        counts = await run_trials(plan, agent, models)
    assert counts.written == 12 and counts.errored == 0
    assert counter.by_model == {"capped": 12}
    assert counter.peak == 3  # capped, and not serialised to one either
    assert limiter.budgets[0].peak_in_flight == 3


async def test_without_limits_the_same_run_is_not_capped(
    shared_server: ScriptedOpenAIServer, counter: InFlightCounter, tmp_path: Path
) -> None:
    agent = LiteLLMAgent("openai/capped", api_base=shared_server.url, api_key="test")
    plan = make_plan(evalset(6), agent, tmp_path, runs=2, max_concurrency=12)
    async with ModelClient() as models:
        await run_trials(plan, agent, models)
    assert counter.peak > 3  # the cap above came from the limiter


async def test_a_model_client_applies_its_limiter_to_every_call(
    shared_server: ScriptedOpenAIServer, counter: InFlightCounter
) -> None:
    limiter = RateLimiter({"openai/*": ModelRateLimit(max_concurrency=2)})

    async def ask(models: ModelClient) -> None:
        await models.complete(
            model="openai/direct",
            messages=[{"role": "user", "content": "hi"}],
            api_base=shared_server.url,
            api_key="test",
        )

    async with ModelClient(limiter) as models:
        await asyncio.gather(*(ask(models) for _ in range(8)))
    assert counter.peak == 2 and counter.by_model == {"direct": 8}
    async with ModelClient() as unlimited:  # another client: the first one's limits stay its own
        await asyncio.gather(*(ask(unlimited) for _ in range(8)))
    assert counter.peak > 2


async def test_a_model_call_needs_a_model() -> None:
    with pytest.raises(ValueError, match="a model call needs model= as a non-empty string"):
        await ModelClient().complete(messages=[])


# ---------------------------------------------------------------- shared by a run's callers


@dataclass
class AsksTheModel:
    """Test criterion standing in for an LLM judge: one model call per trial through the
    judge runtime's model client, as judges make theirs."""

    name: str
    label: str
    threshold: float
    api_base: str

    async def evaluate(self, ctx: CriterionContext):
        assert ctx.judge is not None
        await ctx.judge.models.complete(
            model="openai/judge",
            messages=[{"role": "user", "content": "verdict?"}],
            api_base=self.api_base,
            api_key="test",
        )
        return scored(self, 1.0)


@register("test_asks_the_model")
def _asks(name: str, options: CriterionConfig, config: EvalConfig) -> AsksTheModel:
    return AsksTheModel(name, "asks the model", 1.0, options.text or "")


async def test_one_budget_is_shared_by_the_agent_and_the_judges_of_a_run(
    shared_server: ScriptedOpenAIServer, counter: InFlightCounter, tmp_path: Path
) -> None:
    clock = RecordingClock()
    config = EvalConfig(
        criteria={"test_asks_the_model": CriterionConfig(text=shared_server.url)},
        rate_limits={"openai/*": ModelRateLimit(rpm=60, burst=1)},
    )
    limiter = RateLimiter.from_config(config, clock=clock)
    agent = LiteLLMAgent("openai/agent", api_base=shared_server.url, api_key="test")
    async with ModelClient(limiter) as models:
        run = await evaluate(
            agent,
            evalset(2),
            config,
            runs=2,
            output_dir=tmp_path,
            models=models,
        )
    assert run.totals.trials == 4 and run.totals.passed == 4
    assert counter.by_model == {"agent": 4, "judge": 4}
    # eight calls, one bucket: the k-th call was told to wait k-1 seconds, judges included
    assert sorted(clock.waits) == [float(k) for k in range(1, 8)]


async def test_without_a_client_given_evaluate_makes_one_under_the_configs_limits(
    shared_server: ScriptedOpenAIServer, counter: InFlightCounter, tmp_path: Path
) -> None:
    config = EvalConfig(
        criteria={"test_asks_the_model": CriterionConfig(text=shared_server.url)},
        rate_limits={"openai/*": ModelRateLimit(max_concurrency=1)},
    )
    agent = LiteLLMAgent("openai/agent", api_base=shared_server.url, api_key="test")
    run = await evaluate(
        agent,
        evalset(4),
        config,
        runs=2,
        max_concurrency=8,
        output_dir=tmp_path,
    )
    assert run.totals.passed == 8
    assert counter.peak == 1 and counter.by_model == {"agent": 8, "judge": 8}
