"""The example weather agent as a Google ADK ``LlmAgent``: the same ``get_weather`` tool
and instructions as ``examples/weather`` (imported from there), on a LiteLLM model.

By default the model is agentflow-eval's offline demo model (``agentflow-demo/weather``,
a simulation, registered with LiteLLM here so ADK's own tools can run the agent too). Set
``AGENTFLOW_EXAMPLE_MODEL`` to a LiteLLM model name (``openai/gpt-4o-mini``) to use a real
one, and ``AGENTFLOW_EXAMPLE_BASE_URL`` for an OpenAI-compatible endpoint of one's own
(the key comes from the provider's usual variable, e.g. ``OPENAI_API_KEY``).
"""

from __future__ import annotations

import os

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm

try:
    from ..weather.agent import SYSTEM_PROMPT, get_weather
except ImportError:  # loaded as a top-level package (ADK's own loader, a folder spec)
    from agentflow_eval.examples.weather.agent import (  # type: ignore[no-redef, unused-ignore]
        SYSTEM_PROMPT,
        get_weather,
    )

__all__ = ["root_agent"]

DEMO_MODEL = "agentflow-demo/weather"


def _model() -> LiteLlm:
    name = os.environ.get("AGENTFLOW_EXAMPLE_MODEL")
    base_url = os.environ.get("AGENTFLOW_EXAMPLE_BASE_URL")
    if name:
        return LiteLlm(model=name, **({"api_base": base_url} if base_url else {}))
    from agentflow_eval.demo import install

    install()  # agentflow-demo/* answers offline, whoever calls LiteLLM
    return LiteLlm(model=DEMO_MODEL)


root_agent = LlmAgent(
    name="weather_agent",
    model=_model(),
    description="Answers questions about the current weather in a city.",
    instruction=SYSTEM_PROMPT,
    tools=[get_weather],
)
