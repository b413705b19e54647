"""Provider faults: which failed model calls are worth another try, how long to wait, and
the errors a call raises when trying again did not help.

One policy serves every model call of a run — the agent's and the simulated user's
through :class:`~agentflow_eval.llm.client.ModelClient`, the judges' through
:class:`~agentflow_eval.criteria.judges.runtime.JudgeRuntime` — over both transports
(LiteLLM and the direct OpenAI-compatible client), so a fault means the same wherever it
happens. What counts as a provider's fault, and of which kind, is the table in
:mod:`agentflow_eval.llm.provider_faults` (by HTTP status and by exception; a provider's
own exceptions are added there):

- **transient** (retried with exponential backoff and jitter, or after the wait a
  ``retry-after-ms`` / ``Retry-After`` header asks for);
- **authentication**: never retried; the run stops (:class:`ProviderAuthError`), as
  every later call would fail the same way;
- **rejected**: not retried, and the original exception is raised: a bad request is the
  caller's fault.

A call whose transient faults outlast its retries raises :class:`ProviderUnavailable`;
the trial it belonged to is recorded as an infrastructure error, not an agent failure.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from agentflow_eval.errors import ProviderError
from agentflow_eval.llm.provider_faults import (
    Classified,
    FaultKind,
    call_failure,
    provider_fault,
)
from agentflow_eval.redaction import redact

__all__ = [
    "Fault",
    "FaultKind",
    "MalformedReply",
    "ProviderAuthError",
    "ProviderError",
    "ProviderUnavailable",
    "RetryPolicy",
    "auth_error_in",
    "classify",
    "provider_error_in",
    "provider_fault_in",
    "retry_after_s",
]

_DETAIL_LIMIT = 300


class MalformedReply(ValueError):
    """The provider answered, but not with a chat completion we can read."""


class _RedactedProviderError(ProviderError):
    """A provider's failure whose reason is redacted as it is made: it may quote a
    provider's error body."""

    def __init__(self, reason: str, *, model: str = "", attempts: int = 0) -> None:
        super().__init__(redact(reason), model=model, attempts=attempts)


class ProviderUnavailable(_RedactedProviderError):
    """Transient faults (rate limits, server errors, timeouts, unreadable replies)
    outlasted the retries."""


class ProviderAuthError(_RedactedProviderError):
    """The provider refused the credentials (HTTP 401/403): the run cannot go on.
    ``run_dir`` is set by the stage that stopped, when it knows the run folder."""

    run_dir: str | None = None


@dataclass(frozen=True)
class Fault:
    """How one failed attempt is treated."""

    reason: str
    kind: FaultKind
    status: int | None = None
    retry_after_s: float | None = None

    @property
    def transient(self) -> bool:
        return self.kind == "transient"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a transient fault is retried: up to ``max_retries``
    more attempts, waiting ``base_delay_s * 2**(attempt-1)`` with jitter in [50%, 100%],
    or what the server asked for; never longer than ``max_delay_s``."""

    max_retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError(f"a retry policy takes no negative values: {self}")

    def delay(
        self, attempt: int, retry_after_s: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.max_delay_s)
        backoff = min(self.base_delay_s * 2.0 ** (attempt - 1), self.max_delay_s)
        return backoff * (0.5 + (rng or random).random() / 2)

    async def wait(self, attempt: int, fault: Fault, rng: random.Random | None = None) -> None:
        await asyncio.sleep(self.delay(attempt, fault.retry_after_s, rng))


def classify(exc: BaseException, *, who: str = "model") -> Fault:
    """Whether a failed attempt of a call we made is worth retrying, as the table of
    provider faults says (:func:`~agentflow_eval.llm.provider_faults.call_failure`: by
    HTTP status when there is one, since LiteLLM maps 403 to a plain ``APIError``, else
    by what kind of failure it is). ``who`` starts the reason
    (``"judge openai/gpt-4o"``)."""
    return _fault(call_failure(exc), exc, who, f"{type(exc).__name__}: {_clip(redact(str(exc)))}")


def _fault(found: Classified, exc: BaseException, who: str, detail: str) -> Fault:
    status = f" (HTTP {found.status})" if found.status is not None else ""
    return Fault(
        f"{who}: {found.meaning}{status} — {detail}",
        found.kind,
        found.status,
        retry_after_s(exc) if found.kind == "transient" else None,
    )


def provider_error_in(exc: BaseException) -> ProviderError | None:
    """The :class:`ProviderError` behind ``exc``: itself, or one it was raised from or
    while handling (an agent that wraps a failed model call in its own exception), or
    one inside an exception group."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ProviderError):
            return current
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                stack.append(linked)
    return None


def provider_fault_in(exc: BaseException, *, who: str = "model") -> Fault | None:
    """The provider's fault behind ``exc``, however a framework's own model client raised
    it: a rate limit, a server error, a timeout or a lost connection (``transient``), or
    refused credentials (``auth``), found anywhere in the exception's chain as the table
    of provider faults says (:func:`~agentflow_eval.llm.provider_faults.provider_fault`).
    ``None`` when the chain holds none (the agent's own failure)."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ProviderUnavailable):
            return Fault(current.reason, "transient")
        found = provider_fault(current)
        if found is not None:
            detail = type(current).__name__
            if found.status is not None:
                detail = f"{detail}: {_clip(redact(str(current)))}"
            return _fault(found, current, who, detail)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


def auth_error_in(exc: BaseException) -> ProviderAuthError | None:
    """The :class:`ProviderAuthError` behind ``exc``, if any (see :func:`provider_error_in`)."""
    found = provider_error_in(exc)
    if isinstance(found, ProviderAuthError):
        return found
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            nested = auth_error_in(inner)
            if nested is not None:
                return nested
    return None


def retry_after_s(exc: BaseException) -> float | None:
    """The wait a failed response asked for: ``retry-after-ms``, then ``Retry-After``
    as seconds or an HTTP date; ``None`` when it asked for nothing readable."""
    headers: Any = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(exc, "headers", None)  # the direct transport's ModelHTTPError
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    try:
        lowered = {str(k).lower(): str(v) for k, v in dict(headers).items()}
    except (TypeError, ValueError):
        return None
    if "retry-after-ms" in lowered:
        try:
            return float(lowered["retry-after-ms"]) / 1000
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _clip(text: str, limit: int = _DETAIL_LIMIT) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")
