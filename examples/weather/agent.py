"""The example weather agent: a LiteLLM tool agent with one tool, ``get_weather``.

Evaluate it with ``agentflow-eval run examples.weather.agent:agent
examples/weather/weather.evalset.json``. By default it runs on the built-in offline demo
model (``agentflow-demo/weather``, a simulation); set ``AGENTFLOW_EXAMPLE_MODEL`` (or pass
``--model``) to use a real one, e.g. ``openai/gpt-4o-mini``.
"""

from __future__ import annotations

import os
from typing import Any

from agentflow_eval.agents.litellm_agent import LiteLLMAgent

__all__ = ["SYSTEM_PROMPT", "agent", "get_weather"]

_WEATHER: dict[str, dict[str, Any]] = {
    "new york": {"location": "New York", "condition": "sunny", "temperature": 72},
    "tokyo": {"location": "Tokyo", "condition": "sunny", "temperature": 75},
    "london": {"location": "London", "condition": "cloudy", "temperature": 55},
    "paris": {"location": "Paris", "condition": "rainy", "temperature": 61},
    "san francisco": {"location": "San Francisco", "condition": "foggy", "temperature": 64},
    "sydney": {"location": "Sydney", "condition": "windy", "temperature": 68},
}


def get_weather(location: str) -> dict[str, Any]:
    """Get the current weather for a city.

    Args:
        location: The city to look up, e.g. "Tokyo" or "San Francisco".
    """
    report = _WEATHER.get(location.strip().lower())
    if report is None:
        known = ", ".join(r["location"] for r in _WEATHER.values())
        return {"error": f"no weather data for {location!r}; known cities: {known}"}
    return {**report, "unit": "°F"}


SYSTEM_PROMPT = (
    "You are a weather assistant. Use the get_weather tool for every city the user asks "
    "about, one call per city, and answer from the tool results only: give each city's "
    "condition and temperature in °F in one or two short sentences. If the tool reports an "
    "error, say you have no data for that city."
)

agent = LiteLLMAgent(
    model=os.environ.get("AGENTFLOW_EXAMPLE_MODEL", "agentflow-demo/weather"),
    system_prompt=SYSTEM_PROMPT,
    tools=[get_weather],
    name="weather_agent",
)
