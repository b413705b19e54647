"""Every model call the evaluator makes — the agent's, the simulated user's, the judges' —
goes through :func:`acompletion`, under the request limits of the current run
(:mod:`agentflow_eval.llm.ratelimit`).

Two transports serve it:

- **direct** (:mod:`agentflow_eval.llm.openai_direct`): ``openai/<name>`` models without a
  list price on a self-hosted OpenAI-compatible endpoint (a base URL other than OpenAI's:
  vLLM, llama.cpp, Ollama, a gateway), called over one pooled HTTP session. About 0.5 ms
  of CPU per call instead of LiteLLM's ~10.
- **litellm**: ``litellm.acompletion`` for everything else — every other provider, models
  LiteLLM has a price for (it reports their cost), the offline demo model, and any call
  with an option the direct client does not know.

``AGENTFLOW_LLM_TRANSPORT`` (or an agent's ``transport=``) picks: ``auto`` (the default,
as above), ``litellm`` (always LiteLLM) or ``direct`` (every ``openai/`` model, OpenAI's
own endpoint and priced models included, with their cost unrecorded; a call the direct
client cannot make is an error, not a silent fallback). LiteLLM is imported only when a
call needs it: it takes seconds to import.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal, get_args

from agentflow_eval.demo.names import is_demo_model
from agentflow_eval.llm.ratelimit import current_rate_limiter

__all__ = [
    "TRANSPORT_ENV",
    "Transport",
    "acompletion",
    "model_clients",
    "resolve_transport",
    "response_cost",
]

Transport = Literal["auto", "litellm", "direct"]
TRANSPORT_ENV = "AGENTFLOW_LLM_TRANSPORT"


def resolve_transport(transport: str | None = None) -> Transport:
    """``transport`` if given, else ``$AGENTFLOW_LLM_TRANSPORT``, else ``auto``."""
    chosen = (transport or os.environ.get(TRANSPORT_ENV) or "auto").strip().lower()
    if chosen not in get_args(Transport):
        source = "transport" if transport else TRANSPORT_ENV
        raise ValueError(
            f"{source} must be one of {', '.join(get_args(Transport))}, got {chosen!r}"
        )
    return chosen  # type: ignore[return-value]


async def acompletion(*, transport: str | None = None, **kwargs: Any) -> Any:
    """``litellm.acompletion(**kwargs)`` or its direct equivalent (see the module doc),
    waiting first for the current run's limits on ``kwargs["model"]`` (requests per
    minute, requests in flight, shared Prefect limits) and holding its concurrency slots
    until the reply is in."""
    model = kwargs.get("model")
    if not isinstance(model, str) or not model:
        raise ValueError(f"acompletion needs model= as a non-empty string, got {model!r}")
    send = _sender(resolve_transport(transport), kwargs)
    limiter = current_rate_limiter()
    if limiter is None:
        return await send()
    async with limiter.slot(model):
        return await send()


def _sender(transport: Transport, kwargs: dict[str, Any]) -> Any:
    """A no-argument coroutine function making the call over the chosen transport."""
    if transport != "litellm":
        from agentflow_eval.llm import openai_direct

        request = openai_direct.direct_request(kwargs, include_openai=transport == "direct")
        if request is not None:
            return lambda: openai_direct.chat_completion(request)
        if transport == "direct":
            why = openai_direct.refusal(kwargs, include_openai=True)
            raise ValueError(f"{TRANSPORT_ENV}=direct: the direct client refuses: {why}")
    return lambda: _litellm_acompletion(kwargs)


async def _litellm_acompletion(kwargs: dict[str, Any]) -> Any:
    import litellm  # imported on first use: it costs seconds

    if is_demo_model(kwargs["model"]):
        from agentflow_eval.demo.model import register_demo_provider

        register_demo_provider()
    return await litellm.acompletion(**kwargs)


@asynccontextmanager
async def model_clients() -> AsyncIterator[None]:
    """Keep HTTP connections to model endpoints open for the calls made inside the block
    (one run's trials, its judges) instead of opening one per call."""
    from agentflow_eval.llm.openai_direct import pooled_sessions

    async with pooled_sessions():
        yield


def response_cost(response: Any, model: str) -> float:
    """What a reply cost in USD; 0.0 when unknown (a self-hosted endpoint, the demo model,
    a model LiteLLM has no price for)."""
    from agentflow_eval.llm.openai_direct import ChatCompletion

    if isinstance(response, ChatCompletion):
        return float(response.cost_usd or 0.0)
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost")
    if isinstance(cost, int | float):
        return float(cost)
    if "response_cost" in hidden or is_demo_model(model):
        # LiteLLM already priced this reply and found no price (asking again costs ~1 ms
        # of CPU per call for nothing), or it is the demo model, which has none.
        return 0.0
    litellm = sys.modules.get("litellm")
    if litellm is None:  # not a LiteLLM reply: nothing to price it with
        return 0.0
    provider = model.split("/", 1)[0]
    if any(item.get("provider") == provider for item in litellm.custom_provider_map):
        return 0.0  # a custom provider has no price, and asking makes LiteLLM print noise
    try:
        return float(litellm.completion_cost(completion_response=response, model=model) or 0.0)
    except Exception:  # unpriced or unknown model: cost is unknown, not an error
        return 0.0
