"""The trial's MCP tools as ADK tools, added to the root agent's own (on a clone: the
agent under test is shared by every trial).

Each is a ``BaseTool`` whose declaration is the server's JSON schema as it wrote it (as
ADK's own ``McpTool`` declares one) and whose call goes to the trial's server. ADK runs
it as any tool: its before-tool hook (where the tool mocks answer) sees it first, and
its function response is the trajectory's result. A failed call answers
``{"error": message}``, what the model sees of any failed ADK tool, and is recorded as
the call's error; a result that is
not an object is wrapped as ``{"result": value}``, as ADK wraps a function's return.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from agentflow_eval.environments.mcp import McpTool, call_error_text

__all__ = ["AdkMcpTool", "with_mcp_tools"]


class AdkMcpTool(BaseTool):
    """One MCP tool of the trial, as ADK calls a tool."""

    def __init__(self, tool: McpTool, failed: dict[str, str]) -> None:
        super().__init__(name=tool.name, description=tool.description)
        self.mcp_tool = tool
        self.failed = failed
        """Where a failed call's error is kept, by its function call id: ADK records only
        the function response, and the trajectory must tell an error from a result."""

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema=dict(self.mcp_tool.input_schema),
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            result = await self.mcp_tool.call(args)
        except Exception as exc:  # the model is told, as ADK tells it of a failed tool
            error = call_error_text(exc)
            self.failed[tool_context.function_call_id or self.name] = error
            return {"error": error}
        return result if isinstance(result, dict) else {"result": result}


def with_mcp_tools(root: LlmAgent, tools: Sequence[McpTool], failed: dict[str, str]) -> LlmAgent:
    """``root`` with ``tools`` beside its own (``root`` itself when there are none); the
    errors of their failed calls go to ``failed``, by function call id."""
    if not tools:
        return root
    own = {_tool_name(tool) for tool in root.tools}
    clashes = sorted(own & {tool.name for tool in tools})
    if clashes:
        raise ValueError(
            f"MCP tool(s) {', '.join(map(repr, clashes))} have the name of one of agent "
            f"{root.name!r}'s own tools; tool names must be unique"
        )
    added = [AdkMcpTool(tool, failed) for tool in tools]
    return root.clone(update={"tools": [*root.tools, *added]})


def _tool_name(tool: Any) -> str:
    """The name ADK gives an agent's tool: a tool's own, a plain function's."""
    name = getattr(tool, "name", None)
    return name if isinstance(name, str) else str(getattr(tool, "__name__", ""))
