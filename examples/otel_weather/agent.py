"""The weather agent of ``examples/weather``, written as a plain agent function that runs a
Pydantic AI agent with its OpenTelemetry instrumentation on. It makes no recorder calls and
needs no adapter: agentflow-eval reads the trajectory — the ``get_weather`` calls with
their arguments and results, each model call with its tokens, the agent run — from the
GenAI spans the agent emits during its trial (see ``docs/frameworks/otel.md``).

Evaluate it offline::

    agentflow-eval run examples/otel_weather examples/weather/weather.evalset.json \\
        --config examples/weather/eval_config.json

The model is the offline demo model behind an OpenAI-compatible URL
(:func:`agentflow_eval.demo.server.shared_demo_url`) unless ``AGENTFLOW_EXAMPLE_BASE_URL``
names a real endpoint; then ``AGENTFLOW_EXAMPLE_MODEL`` names the model there (default
``gpt-4o-mini``) and ``OPENAI_API_KEY`` is its key.
"""

from __future__ import annotations

import functools
import os

from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings

from agentflow_eval.agents.base import SessionContext
from agentflow_eval.demo.server import shared_demo_url
from agentflow_eval.examples.weather.agent import SYSTEM_PROMPT, get_weather

__all__ = ["agent", "weather_agent"]

DEFAULT_MODEL = "gpt-4o-mini"


@functools.cache
def weather_agent() -> Agent[None, str]:
    """The Pydantic AI agent, made on first use (so importing this module starts no demo
    server). ``InstrumentationSettings()`` traces through the global tracer provider,
    which agentflow-eval reads from during each trial."""
    base_url = os.environ.get("AGENTFLOW_EXAMPLE_BASE_URL")
    if base_url:
        model_name = os.environ.get("AGENTFLOW_EXAMPLE_MODEL", DEFAULT_MODEL)
        provider = OpenAIProvider(base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY"))
    else:
        model_name = "weather"
        provider = OpenAIProvider(base_url=shared_demo_url(), api_key="offline")
    return Agent(
        OpenAIChatModel(model_name, provider=provider),
        name="weather_agent",
        instructions=SYSTEM_PROMPT,
        tools=[get_weather],
        capabilities=[Instrumentation(settings=InstrumentationSettings())],
    )


async def agent(message: str, history: list[dict[str, str]], session: SessionContext) -> str:
    """Answer one user turn; ``history`` (the session's earlier turns) is the conversation
    Pydantic AI continues."""
    settings: ModelSettings = {}
    if not os.environ.get("AGENTFLOW_EXAMPLE_BASE_URL"):
        # the demo model draws its slips from the request's seed: seeded by the trial,
        # repeated trials differ as they would on a real model (and a run repeats exactly)
        settings["seed"] = session.trial_index
    result = await weather_agent().run(
        message, message_history=_messages(history), model_settings=settings
    )
    return result.output


def _messages(history: list[dict[str, str]]) -> list[ModelMessage]:
    """The session's earlier turns as Pydantic AI messages."""
    messages: list[ModelMessage] = []
    for item in history:
        if item["role"] == "assistant":
            messages.append(ModelResponse(parts=[TextPart(content=item["content"])]))
        else:
            messages.append(ModelRequest(parts=[UserPromptPart(content=item["content"])]))
    return messages
