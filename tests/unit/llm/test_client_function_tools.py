"""An agent's own tool loop through ``SessionContext.models``: plain function tools go
through LiteLLM without its MCP gateway (which needs the optional ``mcp`` package)."""

from __future__ import annotations

import pytest

from agentflow_eval.demo import install as install_demo
from agentflow_eval.llm.client import ModelClient

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"],
            },
        },
    }
]


@pytest.mark.parametrize("transport", ["auto", "litellm"])
async def test_function_tools_through_the_model_client(transport: str) -> None:
    install_demo()
    async with ModelClient() as models:
        reply = await models.complete(
            model="agentflow-demo/weather",
            messages=[{"role": "user", "content": "What's the weather in Tokyo?"}],
            tools=TOOLS,
            transport=transport,
            seed=1,
        )
    calls = reply.choices[0].message.tool_calls
    assert [call.function.name for call in calls] == ["get_weather"]
    assert "Tokyo" in calls[0].function.arguments
