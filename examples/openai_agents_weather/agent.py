"""The example weather agent, the OpenAI Agents SDK way: an ``Agent`` with one function
tool, ``get_weather`` (the weather example's own function), on a chat-completions model.

The model is the offline demo model, served on 127.0.0.1 by this process
(:func:`agentflow_eval.demo.server.shared_demo_url`), unless the environment names a real
one: ``AGENTFLOW_EXAMPLE_BASE_URL`` (an OpenAI-compatible endpoint; without it, OpenAI's
API) and ``AGENTFLOW_EXAMPLE_MODEL`` (the model's name there, default ``gpt-4o-mini``; a
LiteLLM-style ``openai/`` prefix is dropped), with the key in ``AGENTFLOW_EXAMPLE_API_KEY``
or ``OPENAI_API_KEY``. Evaluate it with::

    agentflow-eval run examples/openai_agents_weather examples/weather/weather.evalset.json \
        --config examples/weather/eval_config.json
"""

from __future__ import annotations

import json
import os

from agents import (
    Agent,
    ModelSettings,
    OpenAIChatCompletionsModel,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

from agentflow_eval.demo.server import shared_demo_url

# the weather example's tool and instructions (``examples/weather/agent.py``), by the name
# that also works when this file is loaded by its path from another folder
from agentflow_eval.examples.weather import agent as weather

__all__ = ["agent", "get_weather"]

_BASE_URL = os.environ.get("AGENTFLOW_EXAMPLE_BASE_URL")
_MODEL = os.environ.get("AGENTFLOW_EXAMPLE_MODEL")
OFFLINE = not (_BASE_URL or _MODEL)
"""No real endpoint named: the demo model answers."""


@function_tool
def get_weather(location: str) -> str:
    """Get the current weather for a city.

    Args:
        location: The city to look up, e.g. "Tokyo" or "San Francisco".
    """
    # the weather example's tool, its report sent to the model as JSON (the SDK would
    # send a dict as Python's repr)
    return json.dumps(weather.get_weather(location), ensure_ascii=False)


if OFFLINE:
    # the SDK's tracing exports to OpenAI's platform, which an offline run has no key for
    set_tracing_disabled(True)
    _client = AsyncOpenAI(base_url=shared_demo_url(), api_key="offline")
    # the name the SDK records for each call: a demo model's, so the run is simulated
    _name = "agentflow-demo/weather"
    # The demo model is imperfect on purpose, drawing from the request's seed and the
    # conversation. Behind a URL it cannot tell trials apart (the SDK's client does not
    # say which trial it calls for), so every trial of a case gets the same draw; seed 2
    # is a draw in which it looks up every city the eval set names.
    _settings = ModelSettings(extra_args={"seed": 2})
else:
    _client = AsyncOpenAI(
        base_url=_BASE_URL or None,
        api_key=os.environ.get("AGENTFLOW_EXAMPLE_API_KEY") or os.environ.get("OPENAI_API_KEY"),
    )
    _name = (_MODEL or "gpt-4o-mini").removeprefix("openai/")
    _settings = ModelSettings()

agent = Agent(
    name="weather_agent",
    instructions=weather.SYSTEM_PROMPT,
    tools=[get_weather],
    model=OpenAIChatCompletionsModel(model=_name, openai_client=_client),
    model_settings=_settings,
)
