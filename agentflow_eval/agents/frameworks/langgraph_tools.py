"""Tool mocks for LangGraph graphs, placed in LangGraph's own tool-call hook.

A ``ToolNode`` (``langgraph.prebuilt``, also inside ``create_react_agent``) runs every
call through its ``awrap_tool_call`` interceptor. :func:`gate_tool_nodes` installs one on
each ``ToolNode`` of a graph and its subgraphs, once: it finds the trial's
:class:`TrialMocks` in the run's config (``configurable``, under :data:`CONFIG_KEY`),
asks the turn's gate, and answers a mocked call with a ``ToolMessage`` of the mock's
result (a failure as a message with ``status="error"``, as ``ToolNode`` reports a tool
that raised), so the tool never runs. Without that key (any run not ours) the
interceptor only passes the call on, to an interceptor the node already had or to the
tool. A graph whose nodes call tools in their own code has no such hook: a mocked tool
called that way fails the trial (:class:`~agentflow_eval.agents.tool_gate.MockNotReached`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.pregel import Pregel
from langgraph.types import Command

from agentflow_eval.agents.tool_gate import NO_MOCKS, StandIn, ToolGate

__all__ = ["CONFIG_KEY", "TrialMocks", "gate_tool_nodes", "tool_nodes"]

CONFIG_KEY = "agentflow_eval_tool_mocks"
"""Where a trial's :class:`TrialMocks` travels in the run's ``configurable``."""

_GATED = "_agentflow_eval_gated"

Execute = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]


class TrialMocks:
    """One trial's gate (the turn's, set before each turn), and what answered each call."""

    def __init__(self) -> None:
        self.gate: ToolGate = NO_MOCKS
        self.served: dict[str, StandIn] = {}
        """What answered a call instead of its tool, by the call's id."""


def gate_tool_nodes(graph: Pregel[Any, Any, Any, Any]) -> int:
    """Install the interceptor on every ``ToolNode`` of ``graph`` (subgraphs included)
    that lacks it; the number of ToolNodes found. A node with only a synchronous
    interceptor of its own cannot be chained and is refused with ``ValueError``."""
    found = 0
    for node in tool_nodes(graph):
        found += 1
        if getattr(node, _GATED, False):
            continue
        if node._wrap_tool_call is not None and node._awrap_tool_call is None:
            raise ValueError(
                "a ToolNode of the graph has a synchronous wrap_tool_call only; tool mocks "
                "are placed in awrap_tool_call: give it an async one too"
            )
        node._awrap_tool_call = _interceptor(node._awrap_tool_call)
        setattr(node, _GATED, True)
    return found


def tool_nodes(graph: Pregel[Any, Any, Any, Any]) -> Iterator[ToolNode]:
    """Every ``ToolNode`` of ``graph`` and its subgraphs."""
    return _tool_nodes(graph, set())


def _tool_nodes(graph: Pregel[Any, Any, Any, Any], seen: set[int]) -> Iterator[ToolNode]:
    if id(graph) in seen:
        return
    seen.add(id(graph))
    for node in graph.nodes.values():
        bound = node.bound
        if isinstance(bound, ToolNode):
            yield bound
        elif isinstance(bound, Pregel):
            yield from _tool_nodes(bound, seen)


def _interceptor(
    previous: Callable[[ToolCallRequest, Execute], Awaitable[ToolMessage | Command[Any]]] | None,
) -> Callable[[ToolCallRequest, Execute], Awaitable[ToolMessage | Command[Any]]]:
    async def intercept(request: ToolCallRequest, execute: Execute) -> ToolMessage | Command[Any]:
        configurable = (request.runtime.config or {}).get("configurable") or {}
        mocks = configurable.get(CONFIG_KEY)
        if isinstance(mocks, TrialMocks):
            call = request.tool_call
            call_id = call.get("id") or ""
            stand_in = mocks.gate.decide(call["name"], dict(call.get("args") or {}))
            if stand_in is not None:
                mocks.served[call_id] = stand_in
                return await _answer(call["name"], call_id, stand_in)
        if previous is not None:
            return await previous(request, execute)
        return await execute(request)

    return intercept


async def _answer(name: str, call_id: str, stand_in: StandIn) -> ToolMessage:
    if stand_in.latency_s:
        await asyncio.sleep(stand_in.latency_s)
    if stand_in.error is not None:
        return ToolMessage(
            content=f"Error: {stand_in.error}", name=name, tool_call_id=call_id, status="error"
        )
    result = stand_in.result
    # as ToolNode writes a tool's return: text as it is, anything else as JSON
    content = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    return ToolMessage(content=content, name=name, tool_call_id=call_id)
