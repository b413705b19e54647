"""CPU milliseconds per model call for one client: ``python -m benchmarks.call_cost CLIENT
API_BASE`` prints the figure on its last line. CLIENT is ``aiohttp`` (a bare client),
``direct`` (``ModelClient.complete`` on its direct OpenAI-compatible transport,
as the weather agent calls an unpriced ``openai/`` model on a self-hosted endpoint),
``litellm`` (``litellm.acompletion`` to the server) or ``litellm-mock``
(``litellm.acompletion`` with ``mock_response``: LiteLLM's own cost with no HTTP at all).
32 calls run at once; the first round warms up and is not counted."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from agentflow_eval.llm.client import ModelClient
from examples.weather.agent import SYSTEM_PROMPT
from examples.weather.agent import agent as weather_agent

__all__ = ["cpu_ms_per_call"]

CALLS = 640
CONCURRENCY = 32
MESSAGES = [
    {"role": "system", "content": SYSTEM_PROMPT},
    {"role": "user", "content": "What's the weather in Tokyo?"},
]
TOOLS = [tool.schema for tool in weather_agent.tools]


async def _repeat(call: Callable[[], Awaitable[Any]], count: int) -> None:
    pending = iter(range(count))

    async def worker() -> None:
        for _ in pending:
            await call()

    async with asyncio.TaskGroup() as group:
        for _ in range(CONCURRENCY):
            group.create_task(worker())


async def cpu_ms_per_call(client: str, api_base: str) -> float:
    """CPU time (all threads of this process) per call, in milliseconds."""
    if client.startswith("litellm"):
        import litellm

    session: aiohttp.ClientSession | None = None

    async def bare() -> None:
        assert session is not None
        body = {"model": "bench", "messages": MESSAGES, "tools": TOOLS}
        async with session.post(f"{api_base}/chat/completions", json=body) as response:
            await response.json()

    models = ModelClient()

    async def direct() -> None:
        await models.complete(
            transport="direct",
            model="openai/bench",
            messages=MESSAGES,
            tools=TOOLS,
            api_base=api_base,
            api_key="bench",
            num_retries=0,
        )

    async def via_litellm() -> None:
        await litellm.acompletion(
            model="openai/bench",
            messages=MESSAGES,
            tools=TOOLS,
            api_base=api_base,
            api_key="bench",
            num_retries=0,
            _skip_mcp_handler=True,
        )

    async def mocked() -> None:
        await litellm.acompletion(
            model="openai/bench",
            messages=MESSAGES,
            tools=TOOLS,
            mock_response="It is sunny.",
            _skip_mcp_handler=True,
        )

    calls = {"aiohttp": bare, "direct": direct, "litellm": via_litellm, "litellm-mock": mocked}
    if client not in calls:
        raise SystemExit(f"unknown client {client!r}; expected one of {', '.join(calls)}")
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY))
    try:
        async with models:
            await _repeat(calls[client], CONCURRENCY * 2)  # warm-up: imports, connections
            start = time.process_time()
            await _repeat(calls[client], CALLS)
            return (time.process_time() - start) / CALLS * 1000
    finally:
        await session.close()


if __name__ == "__main__":
    print(f"{asyncio.run(cpu_ms_per_call(sys.argv[1], sys.argv[2])):.3f}")
