"""The demo model behind an OpenAI-compatible URL: a framework's own client gets the demo
model's tool calls and answers over HTTP."""

from __future__ import annotations

import json

import httpx

from agentflow_eval.demo.server import DemoServer

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
        },
    },
}


def test_a_plain_http_client_gets_tool_calls_then_an_answer() -> None:
    with DemoServer() as server:
        asked = [{"role": "user", "content": "What's the weather in Oslo?"}]
        body = {"model": "weather", "messages": asked, "tools": [TOOL], "seed": 3}
        first = httpx.post(f"{server.url}/chat/completions", json=body).json()
        (call,) = first["choices"][0]["message"]["tool_calls"]
        assert call["function"]["name"] == "get_weather"
        assert json.loads(call["function"]["arguments"]) == {"location": "Oslo"}
        assert first["usage"]["prompt_tokens"] > 0
        result = {"location": "Oslo", "condition": "snow", "temperature": 28, "unit": "°F"}
        answered = [
            *asked,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)},
        ]
        second = httpx.post(
            f"{server.url}/chat/completions", json={**body, "messages": answered}
        ).json()
        text = second["choices"][0]["message"]["content"]
        assert "Oslo" in text and "28°F" in text
        assert server.request_count == 2
