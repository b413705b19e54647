"""A run's rate limits, backed by Prefect global concurrency limits where the config names
them, so several runs on one Prefect server share one provider quota.

``prefect_limit: "openai-quota"`` holds a slot of that global concurrency limit for the
duration of each model call; ``prefect_rate_limit: "openai-rpm"`` takes one slot of a
limit with slot decay before each call (Prefect's rate limits). Create them once on the
server, e.g. ``prefect gcl create openai-quota --limit 8`` and ``prefect gcl create
openai-rpm --limit 500 --slot-decay-per-second 8.33``.

Bind the limiter around the stages of one run, so trials and judges share it::

    limiter = await prefect_rate_limiter(plan.config)
    with use_rate_limiter(limiter):
        await run_trials_task(plan, agent)
        await judge_task(plan)
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from prefect.client.orchestration import get_client
from prefect.concurrency.asyncio import concurrency, rate_limit
from prefect.exceptions import ObjectNotFound

from agentflow_eval.errors import InputError
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.models.config import EvalConfig

__all__ = ["PrefectLimitError", "PrefectSharedLimits", "prefect_rate_limiter"]


class PrefectLimitError(InputError):
    """The config names a Prefect limit the server does not have (or cannot rate-limit)."""


class PrefectSharedLimits:
    """:class:`~agentflow_eval.llm.ratelimit.SharedLimits` on Prefect global concurrency
    limits of the current Prefect API."""

    def hold(self, name: str) -> AbstractAsyncContextManager[None]:
        return concurrency(name, occupy=1)

    async def take(self, name: str) -> None:
        await rate_limit(name, occupy=1)


async def prefect_rate_limiter(config: EvalConfig) -> RateLimiter:
    """The limiter of a run with ``config``: in-process limits, plus the Prefect limits the
    config names. Checks first that each named limit exists (and that rate limits have a
    slot decay), raising :class:`PrefectLimitError` naming what is missing — Prefect
    itself would skip an unknown limit with only a warning, leaving the quota unguarded."""
    held = {limit.prefect_limit for limit in config.rate_limits.values() if limit.prefect_limit}
    rated = {
        limit.prefect_rate_limit
        for limit in config.rate_limits.values()
        if limit.prefect_rate_limit
    }
    if not held and not rated:
        return RateLimiter.from_config(config)
    problems: list[str] = []
    async with get_client() as client:
        for name in sorted(held | rated):
            try:
                found = await client.read_global_concurrency_limit_by_name(name)
            except ObjectNotFound:
                problems.append(
                    f"no global concurrency limit named {name!r} on the Prefect server "
                    f"(create it: prefect gcl create {name} --limit N)"
                )
                continue
            if name in rated and not found.slot_decay_per_second:
                problems.append(
                    f"prefect_rate_limit {name!r} has no slot decay, so its slots never "
                    "free themselves; give it --slot-decay-per-second"
                )
    if problems:
        raise PrefectLimitError("rate_limits: " + "; ".join(problems))
    return RateLimiter.from_config(config, shared=PrefectSharedLimits())
