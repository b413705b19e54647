"""A framework's own model client fails in its own words: the provider's fault is found in
the exception's chain by status code and type (rate limits, server errors, timeouts,
lost connections: transient; refused keys: auth), whatever class carries it; a tool's own
HTTP error is not the provider's."""

from __future__ import annotations

import httpx
import openai
import pytest

from agentflow_eval.llm.retry import ProviderUnavailable, provider_fault_in

REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def status_error(cls: type[openai.APIStatusError], status: int) -> openai.APIStatusError:
    response = httpx.Response(status, request=REQUEST, json={"error": {"message": "slow down"}})
    return cls("slow down", response=response, body=None)


class FrameworkError(Exception):
    """A framework wrapping the client's error in its own."""


def raised_from(cause: BaseException) -> FrameworkError:
    try:
        raise FrameworkError("the agent run failed") from cause
    except FrameworkError as wrapped:
        return wrapped


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (status_error(openai.RateLimitError, 429), "transient"),
        (status_error(openai.InternalServerError, 503), "transient"),
        (openai.APITimeoutError(request=REQUEST), "transient"),
        (openai.APIConnectionError(request=REQUEST), "transient"),
        (status_error(openai.AuthenticationError, 401), "auth"),
        (status_error(openai.PermissionDeniedError, 403), "auth"),
    ],
)
def test_the_clients_faults_are_found_however_deep(error: BaseException, kind: str) -> None:
    assert (fault := provider_fault_in(error)) is not None and fault.kind == kind
    deep = provider_fault_in(raised_from(raised_from(error)))
    assert deep is not None and deep.kind == kind
    assert provider_fault_in(ExceptionGroup("tasks", [ValueError("x"), error])) is not None


def test_litellm_and_our_own_errors_count_too() -> None:
    import litellm

    limited = litellm.RateLimitError("slow down", llm_provider="openai", model="gpt-4o")
    assert (fault := provider_fault_in(limited)) is not None and fault.transient
    gave_up = ProviderUnavailable("model: unavailable (HTTP 429)", model="m", attempts=5)
    assert (fault := provider_fault_in(raised_from(gave_up))) is not None and fault.transient


def test_the_agents_own_failures_are_not_the_providers() -> None:
    assert provider_fault_in(ValueError("bad arguments")) is None
    bad_request = status_error(openai.BadRequestError, 400)
    assert provider_fault_in(bad_request) is None  # the request was the agent's
    response = httpx.Response(500, request=httpx.Request("GET", "http://weather.example"))
    tool_error = httpx.HTTPStatusError("weather service down", request=REQUEST, response=response)
    assert provider_fault_in(raised_from(tool_error)) is None  # a tool's, not the model's
