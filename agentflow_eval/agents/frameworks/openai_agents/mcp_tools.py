"""The trial's MCP tools as the SDK's ``FunctionTool``: added to the starting agent's own
tools (on a clone: the agent under test is shared by every trial), so its runs call
them as any function tool, its run data records them, and the tool mocks' gated copies
(:mod:`.tool_mocks`) wrap them like the rest.

A failed call is answered as the SDK answers a function tool that raised (its default
failure text, which the trajectory reads as the call's error): the model is told, and
the run goes on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agents import Agent, FunctionTool
from agents.tool_context import ToolContext

from agentflow_eval.agents.frameworks.openai_agents.trajectory import RUN_ERROR
from agentflow_eval.environments.mcp import McpTool, call_error_text

__all__ = ["with_mcp_tools"]


def with_mcp_tools(agent: Agent[Any], tools: Sequence[McpTool]) -> Agent[Any]:
    """``agent`` with ``tools`` beside its own (``agent`` itself when there are none)."""
    if not tools:
        return agent
    own = {tool.name for tool in agent.tools}
    clashes = sorted(own & {tool.name for tool in tools})
    if clashes:
        raise ValueError(
            f"MCP tool(s) {', '.join(map(repr, clashes))} have the name of one of agent "
            f"{agent.name!r}'s own tools; tool names must be unique"
        )
    return agent.clone(tools=[*agent.tools, *(_function_tool(tool) for tool in tools)])


def _function_tool(tool: McpTool) -> FunctionTool:
    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        try:
            args = json.loads(arguments) if arguments else {}
            if not isinstance(args, dict):
                raise ValueError(f"arguments must be a JSON object, got {type(args).__name__}")
            result = await tool.call(args)
        except Exception as exc:  # the model is told, as the SDK tells it of any tool's
            return RUN_ERROR + call_error_text(exc)
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)

    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=dict(tool.input_schema),
        on_invoke_tool=invoke,
        # the server's schema as it wrote it: strict mode would demand every property
        strict_json_schema=False,
    )
