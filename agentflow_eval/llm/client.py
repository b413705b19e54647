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
  LiteLLM has a price for (it reports their cost), custom providers registered with
  LiteLLM (the offline demo model, once a front door installs it), and any call with an
  option the direct client does not know.

``AGENTFLOW_LLM_TRANSPORT`` (or a call's ``transport=``) picks: ``auto`` (the default, as
above), ``litellm`` (always LiteLLM) or ``direct`` (every ``openai/`` model, OpenAI's own
endpoint and priced models included, with their cost unrecorded; a call the direct client
cannot make is an error, not a silent fallback). LiteLLM is imported only when a call
needs it: it takes seconds to import.

Transient provider faults (429, 5xx, timeouts, connection errors, unreadable replies) are
retried here, the same way on both transports, under the client's
:class:`~agentflow_eval.llm.retry.RetryPolicy` (the transports' own retries stay off): a
call that still fails raises :class:`~agentflow_eval.llm.retry.ProviderUnavailable`, and
its trial is recorded as an infrastructure error. A provider that refuses the credentials
(401/403) raises :class:`~agentflow_eval.llm.retry.ProviderAuthError`, and every later
call to that model fails at once without a request: the run stops.
"""

from __future__ import annotations

import copy
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, get_args

import aiohttp

from agentflow_eval.llm import litellm_compat, openai_direct
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.llm.retry import (
    ProviderAuthError,
    ProviderUnavailable,
    RetryPolicy,
    classify,
)

__all__ = [
    "TAGS_KEY",
    "TAGS_METADATA",
    "TRANSPORT_ENV",
    "ModelCallStats",
    "ModelClient",
    "Transport",
    "resolve_transport",
    "response_cost",
]

Transport = Literal["auto", "litellm", "direct"]
TRANSPORT_ENV = "AGENTFLOW_LLM_TRANSPORT"

TAGS_METADATA = "litellm_metadata"
TAGS_KEY = "agentflow"
"""A tagged call's tags travel in ``litellm_metadata["agentflow"]``: LiteLLM hands them to
its handlers and callbacks and sends none of it to a provider."""


def resolve_transport(transport: str | None = None) -> Transport:
    """``transport`` if given, else ``$AGENTFLOW_LLM_TRANSPORT``, else ``auto``."""
    chosen = (transport or os.environ.get(TRANSPORT_ENV) or "auto").strip().lower()
    if chosen not in get_args(Transport):
        source = "transport" if transport else TRANSPORT_ENV
        raise ValueError(
            f"{source} must be one of {', '.join(get_args(Transport))}, got {chosen!r}"
        )
    return chosen  # type: ignore[return-value]


@dataclass
class ModelCallStats:
    """A client's counters: requests sent (retries included), retries, and calls that
    failed for the provider's reasons after their retries."""

    requests: int = 0
    retries: int = 0
    provider_failures: int = 0


@dataclass
class _Connections:
    """What every view of one client shares: its open state, connection pool and the
    models whose credentials were refused."""

    open: bool = False
    session: aiohttp.ClientSession | None = None
    refused: dict[str, ProviderAuthError] = field(default_factory=dict)


class ModelClient:
    """The model calls of one run: limited by ``rate_limiter`` (none: unlimited), retried
    under ``retry`` (default :class:`RetryPolicy`), and, while the client is open
    (``async with``), sharing one HTTP connection pool. Outside the block each direct call
    opens a connection of its own: correct, only slower.

    :meth:`tagged` gives a view of the client whose calls carry tags (the trial a call is
    made for, the criterion a judge serves) in LiteLLM's own metadata, never in what is
    sent to a provider: a LiteLLM handler installed by a plugin (the offline demo model)
    reads them. Views share the limits, the pool and the counters."""

    def __init__(
        self, rate_limiter: RateLimiter | None = None, *, retry: RetryPolicy | None = None
    ) -> None:
        self.rate_limiter = rate_limiter
        self.retry = retry if retry is not None else RetryPolicy()
        self.stats = ModelCallStats()
        self.tags: Mapping[str, str] = {}
        self._connections = _Connections()
        self._random = random.Random()

    def tagged(self, **tags: str) -> ModelClient:
        """A view of this client whose calls carry ``tags`` as well as its own."""
        view = copy.copy(self)
        view.tags = {**self.tags, **tags}
        return view

    @property
    def auth_failure(self) -> ProviderAuthError | None:
        """The first refusal of credentials this client met, if any."""
        return next(iter(self._connections.refused.values()), None)

    async def __aenter__(self) -> ModelClient:
        self._connections.open = True
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
        connections = self._connections
        connections.open = False
        session, connections.session = connections.session, None
        if session is not None:
            await session.close()

    async def complete(
        self, *, transport: str | None = None, caller: str = "model", **kwargs: Any
    ) -> Any:
        """``litellm.acompletion(**kwargs)`` or its direct equivalent (see the module
        doc), waiting first for the run's limits on ``kwargs["model"]`` and holding its
        concurrency slots until the reply is in; transient faults are retried under the
        client's policy (no slot is held while waiting to retry).

        Raises :class:`ProviderUnavailable` when transient faults outlast the retries,
        :class:`ProviderAuthError` when the credentials are refused, and the transport's
        own error when the request itself was rejected (a bad request is the caller's).
        ``caller`` says whose call it is in those errors' reasons ("model", "simulated
        user")."""
        model = _model_of(kwargs)
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self.complete_once(transport=transport, caller=caller, **kwargs)
            except ProviderAuthError:
                raise
            except Exception as exc:
                fault = classify(exc, who=f"{caller} {model}")
                if not fault.transient:
                    raise
                if attempt > self.retry.max_retries:
                    self.stats.provider_failures += 1
                    tried = f"{attempt} attempt{'s' if attempt != 1 else ''}"
                    raise ProviderUnavailable(
                        f"{fault.reason} ({tried}, retries exhausted)",
                        model=model,
                        attempts=attempt,
                    ) from None
                self.stats.retries += 1
                await self.retry.wait(attempt, fault, self._random)

    async def complete_once(
        self, *, transport: str | None = None, caller: str = "model", **kwargs: Any
    ) -> Any:
        """One attempt of :meth:`complete`, not retried: the transport's own error on a
        failure, except that refused credentials raise :class:`ProviderAuthError` (and a
        model whose credentials were refused before fails without a request)."""
        model = _model_of(kwargs)
        refused = self._connections.refused.get(model)
        if refused is not None:
            raise ProviderAuthError(
                f"{refused.reason} (refused before: not sent again)", model=model, attempts=0
            )
        chosen = resolve_transport(transport)
        self.stats.requests += 1
        try:
            if self.rate_limiter is None:
                return await self._send(chosen, kwargs)
            async with self.rate_limiter.slot(model):
                return await self._send(chosen, kwargs)
        except Exception as exc:
            fault = classify(exc, who=f"{caller} {model}")
            if fault.kind != "auth":
                raise
            error = ProviderAuthError(fault.reason, model=model, attempts=1)
            self._connections.refused.setdefault(model, error)
            raise error from None

    async def _send(self, transport: Transport, kwargs: dict[str, Any]) -> Any:
        if transport != "litellm":
            request = openai_direct.direct_request(kwargs, include_openai=transport == "direct")
            if request is not None:
                return await openai_direct.chat_completion(request, self._pool())
            if transport == "direct":
                why = openai_direct.refusal(kwargs, include_openai=True)
                raise ValueError(f"{TRANSPORT_ENV}=direct: the direct client refuses: {why}")
        if self.tags:
            metadata = dict(kwargs.get(TAGS_METADATA) or {})
            metadata[TAGS_KEY] = dict(self.tags)
            kwargs = {**kwargs, TAGS_METADATA: metadata}
        return await _litellm_acompletion(kwargs)

    def _pool(self) -> aiohttp.ClientSession | None:
        """The shared session while open, made on first use (a run whose calls all go
        through LiteLLM never opens one)."""
        connections = self._connections
        if not connections.open:
            return None
        if connections.session is None or connections.session.closed:
            connections.session = openai_direct.new_session()
        return connections.session


def _model_of(kwargs: dict[str, Any]) -> str:
    model = kwargs.get("model")
    if not isinstance(model, str) or not model:
        raise ValueError(f"a model call needs model= as a non-empty string, got {model!r}")
    return model


async def _litellm_acompletion(kwargs: dict[str, Any]) -> Any:
    litellm = litellm_compat.litellm_module()  # imported on first use

    tools = kwargs.get("tools") or []
    if tools and all(isinstance(t, dict) and t.get("type") == "function" for t in tools):
        # plain function tools (an agent's own loop through SessionContext.models):
        # LiteLLM's MCP gateway never applies, and would need the optional mcp package
        kwargs = {litellm_compat.SKIP_MCP_OPTION: True, **kwargs}
    return await litellm.acompletion(**kwargs)


def response_cost(response: Any, model: str) -> float | None:
    """What a reply cost in USD; None when unknown (a self-hosted endpoint, the demo model,
    a model LiteLLM has no price for)."""
    if isinstance(response, openai_direct.ChatCompletion):
        return response.cost_usd
    known, cost = litellm_compat.computed_cost(response)
    if cost is not None:
        return cost
    if known:  # LiteLLM already priced this reply and found no price: asking again would
        return None  # only repeat the lookup
    litellm = litellm_compat.loaded_litellm()
    if litellm is None:  # not a LiteLLM reply: nothing to price it with
        return None
    provider = model.split("/", 1)[0]
    if litellm_compat.has_custom_provider(provider):
        return None  # a custom provider has no price, and asking makes LiteLLM print noise
    try:
        return float(litellm.completion_cost(completion_response=response, model=model))
    except Exception:  # unpriced or unknown model: cost is unknown, not an error
        return None
