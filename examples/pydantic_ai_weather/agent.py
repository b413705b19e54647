"""The weather agent of ``examples/weather``, written the Pydantic AI way: an ``Agent`` on
an OpenAI-compatible chat model, with the same ``get_weather`` tool and instructions.

Evaluate it with the weather example's eval set::

    agentflow-eval run examples/pydantic_ai_weather/agent.py:agent \\
        examples/weather/weather.evalset.json --config examples/weather/eval_config.json

By default its model is the built-in offline demo model, served on 127.0.0.1 by this
process (:func:`agentflow_eval.demo.server.shared_demo_url`). To use a real model, name
an OpenAI-compatible endpoint with ``AGENTFLOW_EXAMPLE_BASE_URL`` (its key in
``AGENTFLOW_EXAMPLE_API_KEY``, else ``OPENAI_API_KEY``; the model in
``AGENTFLOW_EXAMPLE_MODEL``, default ``gpt-4o-mini``), or set ``AGENTFLOW_EXAMPLE_MODEL``
alone to a Pydantic AI model string such as ``openai:gpt-4o-mini`` (its provider reads its
own key from the environment).
"""

from __future__ import annotations

import os

from pydantic_ai import Agent
from pydantic_ai.models import Model, infer_model
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings

from agentflow_eval.demo.server import shared_demo_url

# the weather example's own tool and instructions (examples/weather/agent.py), by the
# name they are installed under, so this file loads from anywhere
from agentflow_eval.examples.weather.agent import SYSTEM_PROMPT, get_weather

__all__ = ["agent"]


def _model() -> Model:
    base_url = os.environ.get("AGENTFLOW_EXAMPLE_BASE_URL")
    name = os.environ.get("AGENTFLOW_EXAMPLE_MODEL")
    if base_url:
        key = os.environ.get("AGENTFLOW_EXAMPLE_API_KEY") or os.environ.get("OPENAI_API_KEY")
        provider = OpenAIProvider(base_url=base_url, api_key=key)
        return OpenAIChatModel(name or "gpt-4o-mini", provider=provider)
    if name and ":" in name:
        return infer_model(name)
    # The offline demo model behind an OpenAI-compatible URL (it needs no key). It is
    # imperfect on purpose, drawing from a generator seeded by the request's seed and the
    # conversation; over HTTP it cannot tell the trials apart, so every trial of a case
    # gets the same draw. Seed 2's draws answer both of the eval set's cases faithfully
    # (seed 0 would skip New York); the LiteLLM example shows the demo's variation.
    provider = OpenAIProvider(base_url=shared_demo_url(), api_key="offline")
    return OpenAIChatModel("weather", provider=provider, settings=ModelSettings(seed=2))


agent = Agent(_model(), name="weather_agent", instructions=SYSTEM_PROMPT, tools=[get_weather])
