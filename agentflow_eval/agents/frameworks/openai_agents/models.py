"""Which model an Agents SDK agent calls, named three ways: as the SDK sends it (recorded on
each model call), as the run's ``rate_limits`` spell it (LiteLLM's ``provider/name``), and
at what list price (only when the call goes to OpenAI's own API, the one endpoint whose
prices are known).

The SDK resolves an agent's model per model call: ``RunConfig.model`` when set (it
overrides every agent of the run), else the agent's own ``model`` (a ``Model`` object, or
a name its ``model_provider`` turns into one), else the SDK's default model. This module
follows the same order, so what it names is what was called. ``switched`` is what
``--model`` does: a run config whose ``model`` overrides every agent's.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agents import Agent, Model, OpenAIChatCompletionsModel, OpenAIResponsesModel, RunConfig
from agents.models import get_default_model
from agents.models._openai_shared import get_default_openai_client
from openai import AsyncOpenAI

from agentflow_eval.llm import litellm_compat

__all__ = ["ModelBook", "ModelInfo", "switched"]

_OPENAI_HOST = "api.openai.com"
_LITELLM_PREFIX = "litellm/"
_OPENAI_PREFIX = "openai/"


@dataclass(frozen=True)
class ModelInfo:
    """One agent's model: ``name`` as the SDK sends it, ``limit_name`` as the run's
    ``rate_limits`` patterns match it, and ``price`` (USD per input and per output token)
    when it is OpenAI's, called at OpenAI's own API, and LiteLLM's price map knows it."""

    name: str | None
    limit_name: str | None
    price: tuple[float, float] | None = None

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """What a call with these tokens cost at list price; None when unknown."""
        if self.price is None:
            return None
        return input_tokens * self.price[0] + output_tokens * self.price[1]


class ModelBook:
    """The models of an evaluated agent's runs, per SDK agent (every trial meets the same
    agent objects: the starting one and those its handoffs lead to), resolved the way the
    SDK resolves them under ``run_config``."""

    _LIMIT = 256
    """Agents remembered at most (an agent that makes new agents as it runs would
    otherwise grow the book without end)."""

    def __init__(self, run_config: RunConfig) -> None:
        self._run_config = run_config
        self._known: dict[int, tuple[Agent[Any], ModelInfo]] = {}

    def of(self, agent: Agent[Any]) -> ModelInfo:
        found = self._known.get(id(agent))
        if found is not None and found[0] is agent:
            return found[1]
        chosen = self._run_config.model if self._run_config.model is not None else agent.model
        info = describe(chosen)
        if len(self._known) >= self._LIMIT:
            self._known.clear()
        self._known[id(agent)] = (agent, info)
        return info


def describe(model: str | Model | None) -> ModelInfo:
    """The :class:`ModelInfo` of an agent's (or a run config's) ``model``."""
    if model is None:
        model = get_default_model()
    if isinstance(model, str):
        if model.startswith(_LITELLM_PREFIX):  # the SDK's LiteLLM provider: LiteLLM's name
            bare = model.removeprefix(_LITELLM_PREFIX)
            return ModelInfo(name=bare, limit_name=bare)
        name = model.removeprefix(_OPENAI_PREFIX)
        return _openai(name, get_default_openai_client())
    called: Any = getattr(model, "model", None)
    if not isinstance(called, str):
        return ModelInfo(name=None, limit_name=None)
    if type(model).__module__.startswith("agents.extensions.models.litellm"):
        return ModelInfo(name=called, limit_name=called)  # LitellmModel: LiteLLM's own name
    client = getattr(model, "_client", None)
    return _openai(called, client if isinstance(client, AsyncOpenAI) else None)


def _openai(name: str, client: AsyncOpenAI | None) -> ModelInfo:
    """A model called through an OpenAI client: LiteLLM spells it ``openai/<name>``
    (whatever endpoint the client points at); priced only at OpenAI's own API."""
    limit_name = name if name.startswith(_OPENAI_PREFIX) else f"{_OPENAI_PREFIX}{name}"
    if client is not None:
        base = str(client.base_url)
    else:  # the SDK's own client, made from the environment on first use
        base = os.environ.get("OPENAI_BASE_URL") or f"https://{_OPENAI_HOST}/v1"
    price = _list_price(name) if urlsplit(base).hostname == _OPENAI_HOST else None
    return ModelInfo(name=name, limit_name=limit_name, price=price)


def _list_price(name: str) -> tuple[float, float] | None:
    entry = litellm_compat.price_map().get(name)
    if not isinstance(entry, dict):
        return None
    given, taken = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if not isinstance(given, int | float) or not isinstance(taken, int | float):
        return None
    return float(given), float(taken)


def switched(agent: Agent[Any], run_config: RunConfig, model: str) -> RunConfig:
    """``run_config`` with ``model`` for every agent of the run. When the agent is bound
    to an OpenAI client of its own (a chat-completions or responses model over a base URL
    and key), the new model uses that client, so it is called where the agent's was;
    otherwise ``model`` is a name for the run's model provider (OpenAI's API, or LiteLLM
    with a ``litellm/`` prefix)."""
    current = run_config.model if run_config.model is not None else agent.model
    replacement: str | Model = model
    client = getattr(current, "_client", None)
    if isinstance(client, AsyncOpenAI):
        if type(current) is OpenAIChatCompletionsModel:
            replacement = OpenAIChatCompletionsModel(model=model, openai_client=client)
        elif type(current) is OpenAIResponsesModel:
            replacement = OpenAIResponsesModel(model=model, openai_client=client)
    return dataclasses.replace(run_config, model=replacement)
