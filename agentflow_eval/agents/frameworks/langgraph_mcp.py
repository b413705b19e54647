"""The trial's MCP tools as LangChain tools, for a graph factory to compile into the
trial's graph (:func:`langchain_tools`).

Each is a ``StructuredTool`` whose ``args_schema`` is the server's JSON schema as it
wrote it (what the model is offered; the server checks the arguments against it) and
whose coroutine calls the trial's server through :meth:`McpTool.call`. The graph runs it
as any tool: in a ``ToolNode`` the adapter's interceptor sees the call first (where tool
mocks answer), and the ``ToolMessage`` it writes is the trajectory's result. A failed
call is a ``ToolException`` the tool handles itself (``handle_tool_error=True``): the
model gets the server's message in a ``ToolMessage`` with ``status="error"``, recorded as
the call's error, and the run goes on, as with the other adapters' MCP tools.

Why not LangChain's own ``langchain-mcp-adapters`` (0.3.x): it requires ``mcp<2`` and
imports the 1.x SDK's ``mcp.server.fastmcp`` when loaded, so it cannot be installed
beside, or even import under, the ``mcp`` 2.x this project pins. And given a session, its
tools call ``session.call_tool`` themselves and read the result by the 1.x field names
(``isError``, ``structuredContent``), past :meth:`McpTool.call`, where a result is read
the same way for every agent kind. The conversion it would do is this one
``StructuredTool``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from agentflow_eval.environments.mcp import McpTool, call_error_text

__all__ = ["langchain_tools"]


def langchain_tools(tools: Sequence[McpTool]) -> list[BaseTool]:
    """``tools`` as LangChain tools, in the same order."""
    return [_tool(tool) for tool in tools]


def _tool(tool: McpTool) -> BaseTool:
    async def call(**args: Any) -> Any:
        try:
            return await tool.call(args)
        except Exception as exc:  # the model is told, and the run goes on
            raise ToolException(call_error_text(exc)) from exc

    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=dict(tool.input_schema),
        coroutine=call,
        handle_tool_error=True,
        metadata={"mcp_server": tool.server},
    )
