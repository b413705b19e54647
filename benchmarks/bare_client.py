"""The floor: the weather agent's two model calls per trial made with a bare asyncio
HTTP client, at the same concurrency and against the same server as the evaluator — no
framework, no records, no judging. Ratios are taken against this.

The client is aiohttp (what LiteLLM's own HTTP transport runs on). httpx is not used:
its connection pool scans every connection on every request, which at 32 connections
costs ~4 ms of CPU per request here and would flatter every ratio.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import aiohttp

from examples.weather.agent import SYSTEM_PROMPT, agent, get_weather

__all__ = ["run_bare"]


async def _trial(
    session: aiohttp.ClientSession, url: str, question: str, tools: list[dict[str, Any]]
) -> str:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": question},
    ]
    while True:
        body = {"model": "bench", "messages": messages, "tools": tools}
        async with session.post(url, json=body) as response:
            response.raise_for_status()
            message = (await response.json())["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        messages.append(message)
        if not calls:
            return str(message.get("content") or "")
        for call in calls:
            result = get_weather(**json.loads(call["function"]["arguments"]))
            messages.append(
                {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}
            )


async def _run(api_base: str, questions: list[str], concurrency: int) -> float:
    tools = [tool.schema for tool in agent.tools]
    url = f"{api_base.rstrip('/')}/chat/completions"
    connector = aiohttp.TCPConnector(limit=concurrency)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        pending = iter(questions)

        async def worker() -> None:
            for question in pending:
                if not await _trial(session, url, question, tools):
                    raise RuntimeError(f"bare client: empty answer to {question!r}")

        start = time.perf_counter()
        async with asyncio.TaskGroup() as group:
            for _ in range(concurrency):
                group.create_task(worker())
        return time.perf_counter() - start


def run_bare(api_base: str, questions: list[str], concurrency: int) -> float:
    """Seconds to run one trial per question (two model calls each), ``concurrency`` at
    a time, against the OpenAI-compatible server at ``api_base``."""
    return asyncio.run(_run(api_base, questions, concurrency))
