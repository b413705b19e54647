"""Every model call of a run — the agent's, the simulated user's, the judges' — goes through
one :class:`ModelClient`, which applies the run's per-model request limits
(:mod:`agentflow_eval.llm.ratelimit`) and keeps HTTP connections open between calls.

The client is created by whoever starts the run (the flow, the CLI, ``AgentEvaluator``)
and handed to the stages, the agent's sessions (``SessionContext.models``), the simulated
user and the judge runtime, so they all share one set of limits and one connection pool::

    async with ModelClient(RateLimiter.from_config(config)) as models:
        reply = await models.complete(model="openai/gpt-4o-mini", messages=[...])

Two transports serve a call:

- **direct** (:mod:`agentflow_eval.llm.openai_direct`): ``openai/<name>`` models without a
  list price on a self-hosted OpenAI-compatible endpoint (a base URL other than OpenAI's:
  vLLM, llama.cpp, Ollama, a gateway), called over the client's pooled HTTP session.
- **litellm**: ``litellm.acompletion`` for everything else — every other provider, models
  LiteLLM has a price for (it reports their cost), the offline demo model, and any call
  with an option the direct client does not know.

``AGENTFLOW_LLM_TRANSPORT`` (or a call's ``transport=``) picks: ``auto`` (the default, as
above), ``litellm`` (always LiteLLM) or ``direct`` (every ``openai/`` model, OpenAI's own
endpoint and priced models included, with their cost unrecorded; a call the direct client
cannot make is an error, not a silent fallback). LiteLLM is imported only when a call
needs it: it takes seconds to import.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any, Literal, get_args

import aiohttp

from agentflow_eval.demo.names import DEMO_PROVIDER, is_demo_model
from agentflow_eval.llm import litellm_compat, openai_direct
from agentflow_eval.llm.ratelimit import RateLimiter

__all__ = [
    "TRANSPORT_ENV",
    "ModelClient",
    "Transport",
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


class ModelClient:
    """The model calls of one run: limited by ``rate_limiter`` (none: unlimited) and, while
    the client is open (``async with``), sharing one HTTP connection pool. Outside the
    block each direct call opens a connection of its own: correct, only slower."""

    def __init__(self, rate_limiter: RateLimiter | None = None) -> None:
        self.rate_limiter = rate_limiter
        self._open = False
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> ModelClient:
        self._open = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool (the client can be opened again)."""
        self._open = False
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def complete(self, *, transport: str | None = None, **kwargs: Any) -> Any:
        """``litellm.acompletion(**kwargs)`` or its direct equivalent (see the module
        doc), waiting first for the run's limits on ``kwargs["model"]`` and holding its
        concurrency slots until the reply is in."""
        model = kwargs.get("model")
        if not isinstance(model, str) or not model:
            raise ValueError(f"a model call needs model= as a non-empty string, got {model!r}")
        chosen = resolve_transport(transport)
        if self.rate_limiter is None:
            return await self._send(chosen, kwargs)
        async with self.rate_limiter.slot(model):
            return await self._send(chosen, kwargs)

    async def _send(self, transport: Transport, kwargs: dict[str, Any]) -> Any:
        if transport != "litellm":
            request = openai_direct.direct_request(kwargs, include_openai=transport == "direct")
            if request is not None:
                return await openai_direct.chat_completion(request, self._pool())
            if transport == "direct":
                why = openai_direct.refusal(kwargs, include_openai=True)
                raise ValueError(f"{TRANSPORT_ENV}=direct: the direct client refuses: {why}")
        return await _litellm_acompletion(kwargs)

    def _pool(self) -> aiohttp.ClientSession | None:
        """The shared session while open, made on first use (a run whose calls all go
        through LiteLLM never opens one)."""
        if not self._open:
            return None
        if self._session is None or self._session.closed:
            self._session = openai_direct.new_session()
        return self._session


async def _litellm_acompletion(kwargs: dict[str, Any]) -> Any:
    import litellm  # imported on first use: it costs seconds

    if is_demo_model(kwargs["model"]):
        from agentflow_eval.demo.model import register_demo_provider

        register_demo_provider()
    tools = kwargs.get("tools") or []
    if tools and all(isinstance(t, dict) and t.get("type") == "function" for t in tools):
        # plain function tools (an agent's own loop through SessionContext.models):
        # LiteLLM's MCP gateway never applies, and would need the optional mcp package
        kwargs = {litellm_compat.SKIP_MCP_OPTION: True, **kwargs}
    return await litellm.acompletion(**kwargs)


def response_cost(response: Any, model: str) -> float:
    """What a reply cost in USD; 0.0 when unknown (a self-hosted endpoint, the demo model,
    a model LiteLLM has no price for)."""
    if isinstance(response, openai_direct.ChatCompletion):
        return float(response.cost_usd or 0.0)
    known, cost = litellm_compat.computed_cost(response)
    if cost is not None:
        return cost
    if known or is_demo_model(model):
        # LiteLLM already priced this reply and found no price, or it is the demo model,
        # which has none: asking again would only repeat the lookup.
        return 0.0
    litellm = litellm_compat.loaded_litellm()
    if litellm is None:  # not a LiteLLM reply: nothing to price it with
        return 0.0
    provider = model.split("/", 1)[0]
    if provider == DEMO_PROVIDER or litellm_compat.has_custom_provider(provider):
        return 0.0  # a custom provider has no price, and asking makes LiteLLM print noise
    try:
        return float(litellm.completion_cost(completion_response=response, model=model) or 0.0)
    except Exception:  # unpriced or unknown model: cost is unknown, not an error
        return 0.0
