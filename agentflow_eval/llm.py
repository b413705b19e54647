"""Every model call the evaluator makes — the agent's, the simulated user's, the judges' —
goes through :func:`acompletion`: ``litellm.acompletion`` under the request limits of the
current run (:mod:`agentflow_eval.ratelimit`)."""

from __future__ import annotations

from typing import Any

from agentflow_eval.ratelimit import current_rate_limiter

__all__ = ["acompletion"]


async def acompletion(**kwargs: Any) -> Any:
    """``litellm.acompletion(**kwargs)``, waiting first for the current run's limits on
    ``kwargs["model"]`` (requests per minute, requests in flight, shared Prefect limits)
    and holding its concurrency slots until the reply is in. Outside a run with limits it
    is ``litellm.acompletion`` itself."""
    import litellm  # imported on first call: importing this module stays cheap

    model = kwargs.get("model")
    if not isinstance(model, str) or not model:
        raise ValueError(f"acompletion needs model= as a non-empty string, got {model!r}")
    limiter = current_rate_limiter()
    if limiter is None:
        return await litellm.acompletion(**kwargs)
    async with limiter.slot(model):
        return await litellm.acompletion(**kwargs)
