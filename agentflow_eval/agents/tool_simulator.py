"""The simulated tools of one trial (:mod:`agentflow_eval.models.simulated_tools`): each
call of a tool whose mock says ``simulate`` is answered by a model, given the tool's
description, the trial's simulated state, the calls so far and this call's arguments;
its reply gives the tool's result and the state after the call.

Calls are answered one at a time (they change one shared state, in the order the agent
made them). A reply is cached by a key over the model, its options, its seed and the
rendered prompt (as a judge's is), so trials that reach the same state with the same call
pay once. A reply that is not the JSON asked for is asked again (``_ATTEMPTS`` in all),
then the call fails with the reason.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.simulated_tools import SimulatedTool

__all__ = [
    "InMemorySimulationCache",
    "SimulationCache",
    "SimulationFailed",
    "ToolSimulator",
    "initial_state",
    "simulation_cache_key",
]

KEY_SCHEMA = "agentflow-tool-simulation/1"
"""Bumped when the key's recipe or the prompt changes, so old entries stop matching."""

_ATTEMPTS = 3

_PROMPT = """You are simulating a tool that an AI agent calls. Answer as the real tool would.

Tool: {name}
What it does: {description}

The state of the world before this call (JSON):
{state}

The calls made so far, in order (JSON):
{history}

This call's arguments (JSON):
{args}

Reply with one JSON object and nothing else:
{{"result": <what the tool returns to the agent>, "state": <the whole state after this call>}}
Keep to the state and to earlier results; change the state only as this call would."""


class SimulationFailed(RuntimeError):
    """The simulator gave no usable answer: to the agent, the tool failed."""


class SimulationCache(Protocol):
    """Where simulated replies are kept, by :func:`simulation_cache_key`."""

    async def reply(self, key: str, ask: Callable[[], Awaitable[str]]) -> str:
        """The reply kept under ``key``, else ``ask()``'s, kept; callers of one key at
        once share one ``ask`` (trials running together pay for one reply)."""
        ...


class InMemorySimulationCache:
    """A dict of replies: one run's trials share it."""

    def __init__(self) -> None:
        self._replies: dict[str, asyncio.Task[str]] = {}

    def __len__(self) -> int:
        return len(self._replies)

    async def reply(self, key: str, ask: Callable[[], Awaitable[str]]) -> str:
        task = self._replies.get(key)
        if task is None or (task.done() and task.exception() is not None):
            # a failed ask (a provider's outage) is not kept: the next caller asks again
            task = asyncio.ensure_future(ask())
            self._replies[key] = task
        return await asyncio.shield(task)


def simulation_cache_key(*, model: str, options: dict[str, Any], prompt: str) -> str:
    """The sha256 hex key of one simulated reply."""
    material = {"schema": KEY_SCHEMA, "model": model, "options": options, "prompt": prompt}
    encoded = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encoded.encode()).hexdigest()


class _Reply(BaseModel):
    result: Any = None
    state: dict[str, Any]


def _dumped(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)


def _parsed(text: str) -> _Reply:
    """The reply's JSON object (a fenced block or text around it tolerated)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the reply")
    return _Reply.model_validate_json(text[start : end + 1])


def initial_state(specs: Iterable[SimulatedTool]) -> dict[str, Any]:
    """The trial's starting state: the simulated tools' states, the first giving a key
    winning."""
    state: dict[str, Any] = {}
    for spec in specs:
        for key, value in spec.state.items():
            state.setdefault(key, value)
    return state


@dataclass
class ToolSimulator:
    """One trial's simulated world (see the module)."""

    models: ModelClient
    state: dict[str, Any] = field(default_factory=dict)
    cache: SimulationCache | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    loop: asyncio.AbstractEventLoop | None = None
    """The trial's event loop, where a call from agent code in a worker thread is
    answered (:meth:`answer_sync`)."""
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)

    async def answer(self, spec: SimulatedTool, name: str, args: dict[str, Any]) -> Any:
        """The simulated result of calling ``name`` with ``args``; the state moves on."""
        async with self._lock:
            prompt = _PROMPT.format(
                name=name,
                description=spec.description,
                state=_dumped(self.state),
                history=_dumped(self.calls),
                args=_dumped(args),
            )
            reply = await self._ask(spec, prompt)
            self.state = reply.state
            self.calls.append({"tool": name, "args": args, "result": reply.result})
            return reply.result

    def answer_sync(self, spec: SimulatedTool, name: str, args: dict[str, Any]) -> Any:
        """:meth:`answer` for agent code running in a worker thread."""
        if self.loop is None:
            raise SimulationFailed("a simulated tool was called outside its trial")
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass  # a worker thread, as it should be
        else:  # waiting here would block the loop that has to answer
            raise SimulationFailed(
                "a simulated tool was called synchronously on the event loop: call it with "
                "await recorder.acall_tool(...)"
            )
        future = asyncio.run_coroutine_threadsafe(self.answer(spec, name, args), self.loop)
        return future.result()

    async def _ask(self, spec: SimulatedTool, prompt: str) -> _Reply:
        options: dict[str, Any] = {"temperature": spec.temperature, "seed": spec.seed}
        if spec.api_base:
            options["api_base"] = spec.api_base
        problem = ""
        for attempt in range(_ATTEMPTS):
            # each attempt has a key of its own, so a retry is a new question
            key = simulation_cache_key(
                model=spec.model, options={**options, "attempt": attempt}, prompt=prompt
            )
            ask = functools.partial(self._complete, spec, prompt, options)
            text = await (self.cache.reply(key, ask) if self.cache is not None else ask())
            try:
                return _parsed(text)
            except (ValueError, ValidationError) as exc:
                # kept as it came: a rerun replays the same malformed reply and attempt
                problem = str(exc).splitlines()[0]
        raise SimulationFailed(
            f"the simulator ({spec.model}) did not answer with "
            f'{{"result": ..., "state": {{...}}}} in {_ATTEMPTS} attempts: {problem}'
        )

    async def _complete(self, spec: SimulatedTool, prompt: str, options: dict[str, Any]) -> str:
        extra: dict[str, Any] = {}
        if spec.api_key_env:
            key = os.environ.get(spec.api_key_env)
            if not key:
                raise SimulationFailed(
                    f"the simulator's API key variable {spec.api_key_env!r} is not set or empty"
                )
            extra["api_key"] = key
        response = await self.models.complete(
            model=spec.model,
            messages=[{"role": "user", "content": prompt}],
            caller="tool simulator",
            num_retries=0,
            **options,
            **extra,
        )
        return str(response.choices[0].message.content or "")
