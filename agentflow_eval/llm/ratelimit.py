"""Per-model request limits of one run: requests per minute and requests in flight.

A run's config may limit the models it calls::

    "rate_limits": {
        "openai/gpt-4o-mini": {"rpm": 500, "max_concurrency": 8},
        "anthropic/*": {"max_concurrency": 4, "prefect_limit": "anthropic-quota"}
    }

Each entry is one budget, shared by every model its glob pattern matches (so ``"openai/*"``
is a provider-wide quota) and by every caller in the run: agent trials, the simulated
user and the judges. A call takes part in every budget whose pattern matches its model.

- ``rpm`` is enforced as a token bucket (GCRA): requests start at most ``rpm / 60`` per
  second on average, with up to ``burst`` (default ``ceil(rpm / 60)``, at least 1) at
  once. In any window of ``T`` seconds at most ``burst + rpm * T / 60`` requests start.
  Requests are served in the order they asked; a caller cancelled while waiting gives up
  its place without handing it on, so the rate is never exceeded.
- ``max_concurrency`` caps the requests of the budget in flight at once.
- ``prefect_limit`` / ``prefect_rate_limit`` name limits kept outside this process, shared
  by several runs (Prefect global concurrency limits). The core only defines the
  :class:`SharedLimits` interface; ``tasks/support/rate_limits.py`` implements it with Prefect.

A run's limiter is handed to its :class:`~agentflow_eval.llm.client.ModelClient`, which
applies it to every model call of the run; concurrent runs in one process each have their
own.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Protocol, runtime_checkable

from agentflow_eval.models.config import EvalConfig, ModelRateLimit

__all__ = [
    "Clock",
    "ModelBudget",
    "RateLimiter",
    "SharedLimits",
    "SystemClock",
    "TokenBucket",
]

log = logging.getLogger(__name__)


class Clock(Protocol):
    """Where a limiter reads the time and waits: the real clock, or a fake in tests."""

    def now(self) -> float:
        """Seconds on a monotonic clock."""
        ...

    def sleep(self, seconds: float) -> Awaitable[None]:
        """Wait ``seconds``."""
        ...


class SystemClock:
    """The real clock: :func:`time.monotonic` and :func:`asyncio.sleep`."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> Awaitable[None]:
        return asyncio.sleep(seconds)


@runtime_checkable
class SharedLimits(Protocol):
    """Limits kept outside this process, so several runs share one provider quota."""

    def hold(self, name: str) -> AbstractAsyncContextManager[None]:
        """Hold one slot of the concurrency limit ``name`` for the duration of a call."""
        ...

    async def take(self, name: str) -> None:
        """Take one slot of the rate limit ``name`` (it frees itself over time)."""
        ...


class TokenBucket:
    """Requests per minute as a generic cell rate algorithm: one theoretical arrival time,
    advanced by ``60 / rpm`` per request. No lock is needed: on one event loop the
    reservation (read and advance) happens without a suspension point."""

    def __init__(self, rpm: float, burst: int | None = None, clock: Clock | None = None) -> None:
        if rpm <= 0:
            raise ValueError(f"rpm must be positive, got {rpm}")
        if burst is not None and burst < 1:
            raise ValueError(f"burst must be at least 1, got {burst}")
        self.rpm = rpm
        self.burst = burst if burst is not None else max(1, math.ceil(rpm / 60))
        self.interval_s = 60.0 / rpm
        self._clock = clock or SystemClock()
        self._arrival: float | None = None

    def reserve(self) -> float:
        """Reserve the next start time; return how many seconds from now it is."""
        now = self._clock.now()
        arrival = now if self._arrival is None else max(self._arrival, now)
        start = arrival - (self.burst - 1) * self.interval_s
        self._arrival = arrival + self.interval_s
        return max(0.0, start - now)

    async def acquire(self) -> None:
        """Wait until this request may start."""
        wait = self.reserve()
        if wait > 0:
            await self._clock.sleep(wait)


@dataclass
class ModelBudget:
    """One ``rate_limits`` entry: its pattern, and the bucket and semaphore it enforces."""

    pattern: str
    limit: ModelRateLimit
    bucket: TokenBucket | None = None
    semaphore: asyncio.Semaphore | None = None
    in_flight: int = 0
    peak_in_flight: int = 0

    def matches(self, model: str) -> bool:
        return fnmatchcase(model, self.pattern)


@dataclass
class RateLimiter:
    """The request limits of one run, by model-name pattern.

    ``async with limiter.slot(model): <call>`` waits for every budget matching ``model``
    (rates first, then concurrency, then the shared limits, in pattern order so callers
    never deadlock) and holds the concurrency slots for the call.
    """

    limits: Mapping[str, ModelRateLimit] = field(default_factory=dict)
    clock: Clock = field(default_factory=SystemClock)
    shared: SharedLimits | None = None

    def __post_init__(self) -> None:
        self._budgets = [
            ModelBudget(
                pattern=pattern,
                limit=limit,
                bucket=TokenBucket(limit.rpm, limit.burst, self.clock) if limit.rpm else None,
                semaphore=asyncio.Semaphore(limit.max_concurrency)
                if limit.max_concurrency
                else None,
            )
            for pattern, limit in sorted(self.limits.items())
        ]
        self._by_model: dict[str, tuple[ModelBudget, ...]] = {}
        if self.shared is None:
            external = sorted(
                name
                for limit in self.limits.values()
                for name in (limit.prefect_limit, limit.prefect_rate_limit)
                if name
            )
            if external:
                log.warning(
                    "rate limits name Prefect limits %s, but this run has no Prefect server "
                    "to hold them; only the in-process limits apply",
                    ", ".join(repr(name) for name in external),
                )

    @classmethod
    def from_config(
        cls, config: EvalConfig, *, shared: SharedLimits | None = None, clock: Clock | None = None
    ) -> RateLimiter:
        """The limiter of a run with ``config`` (its ``rate_limits``)."""
        return cls(dict(config.rate_limits), clock=clock or SystemClock(), shared=shared)

    @property
    def budgets(self) -> tuple[ModelBudget, ...]:
        return tuple(self._budgets)

    def budgets_for(self, model: str) -> tuple[ModelBudget, ...]:
        """The budgets ``model`` takes part in, in acquisition order."""
        found = self._by_model.get(model)
        if found is None:
            found = tuple(budget for budget in self._budgets if budget.matches(model))
            self._by_model[model] = found
        return found

    @asynccontextmanager
    async def slot(self, model: str) -> AsyncIterator[None]:
        """Wait until ``model`` may be called; hold its concurrency slots meanwhile."""
        budgets = self.budgets_for(model)
        if not budgets:
            yield
            return
        for budget in budgets:
            if budget.bucket is not None:
                await budget.bucket.acquire()
        async with AsyncExitStack() as stack:
            for budget in budgets:
                if budget.semaphore is not None:
                    await stack.enter_async_context(budget.semaphore)
            if self.shared is not None:
                for budget in budgets:
                    if budget.limit.prefect_rate_limit:
                        await self.shared.take(budget.limit.prefect_rate_limit)
                for budget in budgets:
                    if budget.limit.prefect_limit:
                        await stack.enter_async_context(
                            self.shared.hold(budget.limit.prefect_limit)
                        )
            stack.enter_context(_counted(budgets))
            yield


@contextmanager
def _counted(budgets: tuple[ModelBudget, ...]) -> Iterator[None]:
    """Track the requests in flight per budget (what tests and logs look at)."""
    for budget in budgets:
        budget.in_flight += 1
        budget.peak_in_flight = max(budget.peak_in_flight, budget.in_flight)
    try:
        yield
    finally:
        for budget in budgets:
            budget.in_flight -= 1
