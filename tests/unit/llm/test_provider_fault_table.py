"""The table of provider faults (llm/provider_faults.py): every HTTP status has its kind,
and a provider's own exception, once added, is a provider fault like the built-in ones —
retried by the model client, an infrastructure error in a trial, a refusal that stops
the run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.llm.provider_faults import (
    BY_STATUS,
    ProviderException,
    add_provider_exception,
    provider_exceptions,
    remove_provider_exception,
)
from agentflow_eval.llm.retry import (
    ProviderAuthError,
    ProviderUnavailable,
    RetryPolicy,
    classify,
    provider_fault_in,
)
from agentflow_eval.pipeline.evaluate import evaluate
from tests.support.faults import ANSWER, answer_config, answer_evalset

FAST = RetryPolicy(max_retries=3, base_delay_s=0.001, max_delay_s=0.01)


def test_every_http_status_has_its_kind() -> None:
    for status in range(100, 600):
        assert any(status in rule.statuses for rule in BY_STATUS), status
    first = {status: next(r for r in BY_STATUS if status in r.statuses) for status in (401, 429)}
    assert (first[401].kind, first[429].kind) == ("auth", "transient")


class Overloaded(Exception):
    """What a provider's own SDK raises when it is busy: no HTTP status on it."""


class KeyRevoked(Exception):
    """What it raises when the key was revoked."""


class SdkError(Exception):
    """Its errors that carry the HTTP status."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


@pytest.fixture
def sdk_rows() -> Iterator[list[ProviderException]]:
    """Rows a test adds, taken out again after it."""
    added: list[ProviderException] = []
    yield added
    for row in added:
        remove_provider_exception(row)
    assert not any(row in provider_exceptions() for row in added)


class SdkModelClient(ModelClient):
    """A model client whose transport is a provider's SDK: each attempt raises the next
    of ``failures`` until they run out, then answers."""

    def __init__(self, failures: list[Exception]) -> None:
        super().__init__(retry=FAST)
        self.failures = failures

    async def complete_once(
        self, *, transport: str | None = None, caller: str = "model", **kwargs: Any
    ) -> Any:
        self.stats.requests += 1
        if self.failures:
            raise self.failures.pop(0)
        return "the answer"


async def test_an_added_provider_exception_is_retried(sdk_rows: list[ProviderException]) -> None:
    unknown = SdkModelClient([Overloaded("busy"), Overloaded("busy")])
    with pytest.raises(Overloaded):  # not known: the caller's own error, raised as it is
        await unknown.complete(model="sdk/model", messages=[])
    assert unknown.stats.requests == 1 and unknown.stats.retries == 0

    sdk_rows.append(add_provider_exception(Overloaded, "transient"))
    client = SdkModelClient([Overloaded("busy"), Overloaded("busy")])
    assert await client.complete(model="sdk/model", messages=[]) == "the answer"
    assert client.stats.requests == 3 and client.stats.retries == 2

    gives_up = SdkModelClient([Overloaded("busy")] * 5)
    with pytest.raises(ProviderUnavailable, match=r"sdk/model: unavailable — Overloaded"):
        await gives_up.complete(model="sdk/model", messages=[])
    assert gives_up.stats.requests == 4


def test_a_package_of_a_providers_exceptions_goes_by_their_status(
    sdk_rows: list[ProviderException],
) -> None:
    assert classify(SdkError("slow down", 429)).kind == "transient"  # a call we made
    assert provider_fault_in(SdkError("slow down", 429)) is None  # in an agent: unknown
    sdk_rows.append(add_provider_exception(ProviderException((__name__,), ("SdkError",))))
    limited = provider_fault_in(SdkError("slow down", 429), who="agent a")
    assert limited is not None and limited.kind == "transient"
    assert limited.reason.startswith("agent a: unavailable (HTTP 429) — SdkError")
    assert provider_fault_in(SdkError("bad request", 400)) is None  # the agent's request


def sdk_agent(raised: type[Exception]) -> PythonAgent:
    def agent(message: str, session: Any) -> str:
        if session.trial_index % 2:
            raise RuntimeError("the agent's run failed") from raised("from the SDK")
        return ANSWER

    return PythonAgent(agent)


async def test_an_added_exception_in_an_agents_failure_is_the_providers(
    tmp_path: Path, sdk_rows: list[ProviderException]
) -> None:
    options = {"runs": 2, "max_concurrency": 1}
    before = await evaluate(
        sdk_agent(Overloaded),
        answer_evalset(1),
        answer_config(),
        **options,
        output_dir=tmp_path / "before",
    )
    assert [r.trial.error.kind for r in before.trials if r.trial.error] == ["exception"]

    sdk_rows.append(add_provider_exception(Overloaded, "transient"))
    sdk_rows.append(add_provider_exception(KeyRevoked, "auth"))
    after = await evaluate(
        sdk_agent(Overloaded),
        answer_evalset(1),
        answer_config(),
        **options,
        output_dir=tmp_path / "after",
    )
    errors = [r.trial.error for r in after.trials if r.trial.error]
    assert [e.kind for e in errors] == ["infrastructure"]
    assert errors[0].message.endswith(": unavailable — Overloaded")
    assert after.totals.infrastructure_errors == 1 and after.totals.passed == 1

    with pytest.raises(ProviderAuthError, match="authentication failed — KeyRevoked"):
        await evaluate(
            sdk_agent(KeyRevoked), answer_evalset(1), answer_config(), **options,
            output_dir=tmp_path / "revoked",
        )  # fmt: skip
