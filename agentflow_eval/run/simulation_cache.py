"""Simulated tools' replies kept where the run keeps its judges' replies.

A simulated tool's reply is a model's answer to a prompt fixed by the tool, the state so
far, the call and its seed (:func:`~agentflow_eval.agents.tool_simulator.
simulation_cache_key`), as a judge's is. :class:`KeptSimulationCache` keeps them in the
run's judge cache (a pool's bucket, a folder, this run's memory), under keys of their own
kind, so a run again with the same seed pays for no reply it paid for before, and the
trial stage records only the calls it made. Trials of one stage asking for one key at
once share one call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from agentflow_eval.criteria.judges.cache import CachedJudgeReply, JudgeCache

__all__ = ["SIMULATOR_MODEL_LABEL", "KeptSimulationCache"]

log = logging.getLogger(__name__)

SIMULATOR_MODEL_LABEL = "simulated tool"
"""What a kept reply names as its writer (the key already holds the model)."""


class KeptSimulationCache:
    """A :class:`~agentflow_eval.agents.tool_simulator.SimulationCache` over a judge
    cache, under the judges' settings (``refresh``: ask again and keep the new reply;
    ``expires_in_s``: how long a kept reply is served). A store that cannot be read or
    written is warned of and asked around: the reply comes from the model, as without a
    cache."""

    def __init__(
        self, store: JudgeCache, *, refresh: bool = False, expires_in_s: float | None = None
    ) -> None:
        self._store = store
        self._refresh = refresh
        self._expires_in_s = expires_in_s
        self._asking: dict[str, asyncio.Task[str]] = {}
        self.hits = 0

    async def reply(self, key: str, ask: Callable[[], Awaitable[str]]) -> str:
        task = self._asking.get(key)
        if task is None or (task.done() and task.exception() is not None):
            task = asyncio.ensure_future(self._kept_or_asked(key, ask))
            self._asking[key] = task
        return await asyncio.shield(task)

    async def _kept_or_asked(self, key: str, ask: Callable[[], Awaitable[str]]) -> str:
        kept = None
        try:
            if not self._refresh:
                kept = await self._store.get(key)
        except Exception as exc:  # a store's fault never fails a trial
            log.warning("simulated tools: cache at %s unreadable (%s)", self._store.location, exc)
        if kept is not None:
            self.hits += 1
            return kept.content
        text = await ask()
        reply = CachedJudgeReply(content=text, model=SIMULATOR_MODEL_LABEL)
        try:
            await self._store.put(key, reply, expires_in_s=self._expires_in_s)
        except Exception as exc:
            log.warning("simulated tools: cache at %s unwritable (%s)", self._store.location, exc)
        return text
