"""What counts as a model provider's fault, and how each is treated: the one table the
model client's retries, the judges' and the trials all read (:mod:`.retry` words the
reasons and does the waiting).

A failure is one of three kinds (:data:`FaultKind`):

- ``transient`` — **retryable**: worth another try after a wait; a call whose transient
  faults outlast the retries is recorded as an infrastructure error, not the agent's;
- ``auth`` — **credentials refused**: never retried, the run stops (every later call
  would fail the same way);
- ``rejected`` — **not a provider fault**: the request (or the code around it) was at
  fault; raised as it is, never retried.

**By HTTP status** (:data:`BY_STATUS`, the first row holding the status decides)::

    401, 403             auth       authentication failed
    408, 409, 429        transient  unavailable (timed out, conflict, rate limited)
    500-599              transient  unavailable (the provider's server failed)
    100-399              transient  reply unreadable (a success whose body is no completion)
    400-499 (the rest)   rejected   rejected the request

**By exception** (:data:`BY_EXCEPTION`, the first matching row decides; a row that goes
by the status decides only when the exception carries one)::

    MalformedReply (ours), LiteLLM's APIResponseValidationError,
      JSONSchemaValidationError                          transient  reply unreadable
    any exception of a model client package (openai, litellm, anthropic, google,
      langchain_core, pydantic_ai, agentflow_eval)       by its HTTP status
    a model client's APIConnectionError, APITimeoutError, Timeout
                                                         transient  unreachable
    TimeoutError, ConnectionError                        transient  unreachable
      (only for a call agentflow-eval made: in an agent's code they may be a tool's)

Where the table is read:

- a call agentflow-eval made (:class:`~.client.ModelClient`, the judges) failed: every
  exception it raised speaks for the provider, so one without a row is judged by its
  status, and without a status it is ``rejected`` (:func:`call_failure`); a message that
  says no key was given at all (:data:`NO_CREDENTIALS`) is ``auth`` whatever its status;
- an agent failed: only an exception with a row speaks for the provider (a tool's own
  HTTP 500 is the agent's to handle), looked for along the exception's causes
  (:func:`provider_fault`, used by :func:`.retry.provider_fault_in`).

A provider whose client raises exceptions of its own adds them with
:func:`add_provider_exception`: its rows come before the built-in ones.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "BY_EXCEPTION",
    "BY_STATUS",
    "MODEL_CLIENTS",
    "NO_CREDENTIALS",
    "Classified",
    "FaultKind",
    "ProviderException",
    "StatusRule",
    "add_provider_exception",
    "call_failure",
    "provider_exceptions",
    "provider_fault",
    "remove_provider_exception",
    "status_of",
]

FaultKind = Literal["transient", "auth", "rejected"]


@dataclass(frozen=True)
class StatusRule:
    """What the HTTP statuses in ``statuses`` mean."""

    statuses: frozenset[int] | range
    kind: FaultKind
    meaning: str
    """How a reason says it: ``unavailable`` (followed by the status)."""


BY_STATUS: tuple[StatusRule, ...] = (
    StatusRule(frozenset({401, 403}), "auth", "authentication failed"),
    StatusRule(frozenset({408, 409, 429}), "transient", "unavailable"),
    StatusRule(range(500, 600), "transient", "unavailable"),
    StatusRule(range(100, 400), "transient", "reply unreadable"),
    StatusRule(range(400, 500), "rejected", "rejected the request"),
)


@dataclass(frozen=True)
class ProviderException:
    """Exceptions that speak for a model provider, and what one means.

    An exception matches when its class, or a class it derives from, is defined under
    one of ``packages`` (a package or module name) and, when ``names`` are given, is
    named one of them: matched by name, so no client is imported to check."""

    packages: tuple[str, ...]
    names: tuple[str, ...] = ()
    kind: FaultKind | None = None
    """``None``: by the HTTP status the exception carries (:data:`BY_STATUS`)."""
    meaning: str = ""
    """How a reason says it (``unreachable``); for a row that goes by status, the status
    row's."""
    agents: bool = True
    """Also in an agent's failure. ``False`` for exceptions that do not say whose they
    are (a ``TimeoutError`` in an agent's code may be its tool's)."""

    @classmethod
    def of(cls, exception: type[BaseException], kind: FaultKind | None = None) -> ProviderException:
        """The row of one exception class (and its subclasses)."""
        return cls(
            packages=(exception.__module__,),
            names=(exception.__name__,),
            kind=kind,
            meaning=_MEANINGS[kind] if kind is not None else "",
        )

    def matches(self, exc: BaseException) -> bool:
        return any(
            _under(klass.__module__, self.packages)
            and (not self.names or klass.__name__ in self.names)
            for klass in type(exc).__mro__
        )


_MEANINGS: dict[FaultKind, str] = {
    "transient": "unavailable",
    "auth": "authentication failed",
    "rejected": "rejected the request",
}

MODEL_CLIENTS = (
    "agentflow_eval",
    "anthropic",
    "google",
    "langchain_core",
    "litellm",
    "openai",
    "pydantic_ai",
)
"""The packages whose exceptions speak for a model provider: the model clients frameworks
use, and our own transports."""

BY_EXCEPTION: tuple[ProviderException, ...] = (
    # a reply that is not a readable chat completion (LiteLLM gives its own a status of
    # 500, but what they mean is the reply)
    ProviderException(("agentflow_eval",), ("MalformedReply",), "transient", "reply unreadable"),
    ProviderException(
        ("litellm",),
        ("APIResponseValidationError", "JSONSchemaValidationError"),
        "transient",
        "reply unreadable",
    ),
    # any error of a model client, by the HTTP status it carries
    ProviderException(MODEL_CLIENTS),
    # a model client's lost connection or timeout, which carries no status
    ProviderException(
        MODEL_CLIENTS,
        ("APIConnectionError", "APITimeoutError", "Timeout"),
        "transient",
        "unreachable",
    ),
    # a lost connection or a timeout of a call we made (in an agent: maybe a tool's)
    ProviderException(
        ("builtins",), ("TimeoutError", "ConnectionError"), "transient", "unreachable", agents=False
    ),
)

NO_CREDENTIALS = (
    "Missing credentials. Please pass an `api_key`",
    "The api_key client option must be set",
)
"""How the OpenAI SDK (inside LiteLLM) says no key was given at all; LiteLLM reports it as
a server error (HTTP 500)."""

_added: list[ProviderException] = []
_lock = threading.Lock()


def add_provider_exception(
    exception: type[BaseException] | ProviderException, kind: FaultKind | None = None
) -> ProviderException:
    """Teach the table a provider's exceptions: a class (and its subclasses) with the kind
    it always means, or ``kind=None`` to go by the HTTP status it carries; or a
    :class:`ProviderException` row (a whole package, say). Added rows are read before the
    built-in ones, the latest first. Returns the row."""
    row = (
        exception
        if isinstance(exception, ProviderException)
        else ProviderException.of(exception, kind)
    )
    with _lock:
        _added.insert(0, row)
    return row


def remove_provider_exception(row: ProviderException) -> None:
    """Take an added row out of the table again (the built-in rows stay)."""
    with _lock:
        if row in _added:
            _added.remove(row)


def provider_exceptions() -> tuple[ProviderException, ...]:
    """Every row, in the order they are read: the added ones, then :data:`BY_EXCEPTION`."""
    return (*_added, *BY_EXCEPTION)


@dataclass(frozen=True)
class Classified:
    """A failure placed in the table."""

    kind: FaultKind
    meaning: str
    status: int | None = None
    """The HTTP status that decided, if one did."""


def call_failure(exc: BaseException) -> Classified:
    """A failed call agentflow-eval made to a provider, placed in the table."""
    if any(sign in str(exc) for sign in NO_CREDENTIALS):
        return Classified("auth", "no credentials")
    found = _by_rows(exc, agent=False)
    if found is not None:
        return found
    status = status_of(exc)
    if status is not None:
        return _by_status(status)
    return Classified("rejected", "call failed")


def provider_fault(exc: BaseException) -> Classified | None:
    """One exception of an agent's failure, placed in the table when it speaks for a
    provider and means a provider's fault (``transient`` or ``auth``); ``None`` when it is
    not the provider's."""
    found = _by_rows(exc, agent=True)
    return found if found is not None and found.kind != "rejected" else None


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an exception carries, as the clients frameworks use say it:
    ``status_code`` (openai, LiteLLM, Pydantic AI, ours), ``response.status_code`` (httpx),
    ``status`` (aiohttp), ``code`` (google-genai)."""
    for value in (
        getattr(exc, "status_code", None),
        getattr(getattr(exc, "response", None), "status_code", None),
        getattr(exc, "status", None),
        getattr(exc, "code", None),
    ):
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
            return value
    return None


def _by_rows(exc: BaseException, *, agent: bool) -> Classified | None:
    for row in provider_exceptions():
        if (agent and not row.agents) or not row.matches(exc):
            continue
        if row.kind is not None:
            return Classified(row.kind, row.meaning)
        status = status_of(exc)
        if status is not None:
            return _by_status(status)
    return None


def _by_status(status: int) -> Classified:
    rule = next(rule for rule in BY_STATUS if status in rule.statuses)
    return Classified(rule.kind, rule.meaning, status)


def _under(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)
