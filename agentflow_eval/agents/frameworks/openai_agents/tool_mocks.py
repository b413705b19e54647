"""Tool mocks for SDK agents: a trial whose turns have mocks runs copies of its agents
whose function tools ask the turn's :class:`~agentflow_eval.agents.tool_gate.ToolGate`
before they run.

The SDK has no hook that can answer a tool call instead of the tool, so the copies are
made with its own ``Agent.clone``: each ``FunctionTool`` gets an ``on_invoke_tool`` that
returns a mock's result, or a failure as the SDK's default failure text (what the model
would see had the tool raised), and calls the tool's own invoker otherwise. Agents handed
off to (directly or through a ``handoff()`` object) are copied the same way, once each, so
a conversation that comes back to an agent finds the same copy. An agent used as a tool
(``Agent.as_tool``) is one function tool: it can be mocked by its tool name, but its own
tools run as they are.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

from agents import Agent, FunctionTool, Handoff, RunContextWrapper
from agents.tool_context import ToolContext

from agentflow_eval.agents.frameworks.openai_agents.trajectory import RUN_ERROR
from agentflow_eval.agents.tool_gate import NO_MOCKS, StandIn, ToolGate

__all__ = ["TrialMocks"]


class TrialMocks:
    """One trial's mocked copies of its agents, and what answered each call."""

    def __init__(self) -> None:
        self.gate: ToolGate = NO_MOCKS
        """The gate of the turn being run (set before each turn)."""
        self.served: dict[str, StandIn] = {}
        """What answered each call instead of its tool, by the call's id."""
        self._copies: dict[int, Agent[Any]] = {}

    def copy_of(self, agent: Agent[Any]) -> Agent[Any]:
        """``agent`` with its tools, and those of every agent it hands off to, gated."""
        if any(agent is copy for copy in self._copies.values()):
            return agent  # already a copy: the agent that answered the last turn
        if id(agent) in self._copies:
            return self._copies[id(agent)]
        copy = agent.clone()
        self._copies[id(agent)] = copy
        copy.tools = [self._gated(t) if isinstance(t, FunctionTool) else t for t in agent.tools]
        copy.handoffs = [self._handoff(h) for h in agent.handoffs]
        return copy

    def _handoff(self, target: Agent[Any] | Handoff[Any, Any]) -> Agent[Any] | Handoff[Any, Any]:
        if isinstance(target, Agent):
            return self.copy_of(target)
        original = target.on_invoke_handoff

        async def invoke(context: RunContextWrapper[Any], arguments: str) -> Any:
            reached = await original(context, arguments)
            return self.copy_of(reached) if isinstance(reached, Agent) else reached

        return dataclasses.replace(target, on_invoke_handoff=invoke)

    def _gated(self, tool: FunctionTool) -> FunctionTool:
        original = tool.on_invoke_tool

        async def invoke(context: ToolContext[Any], arguments: str) -> Any:
            gate = self.gate
            stand_in = gate.decide(tool.name, _arguments(arguments)) if gate.active else None
            if stand_in is None:
                return await original(context, arguments)
            self.served[context.tool_call_id] = stand_in
            if stand_in.latency_s:
                await asyncio.sleep(stand_in.latency_s)
            if stand_in.error is not None:
                return RUN_ERROR + stand_in.error
            return stand_in.result

        return dataclasses.replace(tool, on_invoke_tool=invoke)


def _arguments(raw: str) -> dict[str, Any]:
    try:
        parsed = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
