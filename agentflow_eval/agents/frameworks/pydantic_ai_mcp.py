"""The trial's MCP tools as a Pydantic AI toolset, given to one run
(``agent.run(..., toolsets=[...])``): the agent under test, shared by every trial, is
never changed, its runs call them as any function tool, and its messages record them
(so they are in the trajectory as the agent's own tools' calls are).

The server's own JSON schema is what the model sees (``Tool.from_schema``), and the
server checks the arguments against it. A failed call is a ``ModelRetry`` carrying the
server's message: Pydantic AI tells the model, as of a tool that asked for another try,
and the trajectory reads the retry prompt as the call's error; a plain exception would
end the run instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai import ModelRetry, Tool
from pydantic_ai.toolsets import FunctionToolset

from agentflow_eval.environments.mcp import McpTool, call_error_text

__all__ = ["mcp_toolset"]


def mcp_toolset(tools: Sequence[McpTool]) -> FunctionToolset[Any] | None:
    """``tools`` as one toolset (``None`` when there are none)."""
    if not tools:
        return None
    return FunctionToolset([_tool(tool) for tool in tools])


def _tool(tool: McpTool) -> Tool[Any]:
    async def call(**args: Any) -> Any:
        try:
            return await tool.call(args)
        except Exception as exc:  # the model is told, and the run goes on
            raise ModelRetry(call_error_text(exc)) from exc

    return Tool.from_schema(
        call, name=tool.name, description=tool.description, json_schema=dict(tool.input_schema)
    )
