"""The weather agent's loop over a bare HTTP client instead of LiteLLM: the same two model
calls per trial and the same tool, recorded like any agent. Evaluating it measures the
evaluator itself (Prefect, the trial runner, streaming, judging, reports) without
LiteLLM's per-call cost: ``agentflow-eval run benchmarks.raw_agent:agent ...``.

The model server is ``$OPENAI_BASE_URL`` (the benchmark's local server).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from agentflow_eval.agents.base import TrajectoryRecorder
from examples.weather.agent import SYSTEM_PROMPT, get_weather
from examples.weather.agent import agent as weather_agent

__all__ = ["agent"]

_TOOLS = [tool.schema for tool in weather_agent.tools]
_pools: dict[asyncio.AbstractEventLoop, AsyncIterator[aiohttp.ClientSession]] = {}


async def _pool() -> AsyncIterator[aiohttp.ClientSession]:
    """One connection pool for the event loop's life: ``asyncio.run`` finalises async
    generators before closing its loop, which closes the pool cleanly."""
    client = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0), timeout=aiohttp.ClientTimeout(total=60)
    )
    try:
        while True:
            yield client
    finally:
        await client.close()


async def _client() -> aiohttp.ClientSession:
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = _pool()
    return await anext(pool)


async def agent(message: str, recorder: TrajectoryRecorder) -> str:
    """Answer one weather question: a tool call, then the final answer."""
    url = os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": message},
    ]
    while True:
        body = {"model": "bench", "messages": messages, "tools": _TOOLS}
        async with (await _client()).post(url, json=body) as response:
            response.raise_for_status()
            reply = await response.json()
        usage = reply.get("usage") or {}
        recorder.usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0))
        answer = reply["choices"][0]["message"]
        messages.append(answer)
        calls = answer.get("tool_calls") or []
        if not calls:
            return str(answer.get("content") or "")
        for call in calls:
            args = json.loads(call["function"]["arguments"])
            with recorder.tool(call["function"]["name"], args) as record:
                record.id = call["id"]
                record.result = get_weather(**args)
            messages.append(
                {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(record.result)}
            )
