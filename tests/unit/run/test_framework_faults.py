"""Provider faults raised by a framework's own model client: a rate limit that outlasted
the framework's retries is an infrastructure error (left out of the pass rate), refused
credentials stop the run, and the agent's own failures stay the agent's."""

from __future__ import annotations

from pathlib import Path

import httpx
import openai
import pytest

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.llm.retry import ProviderAuthError
from agentflow_eval.pipeline.evaluate import evaluate
from tests.support.faults import ANSWER, answer_config, answer_evalset

REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def refusal(status: int) -> openai.APIStatusError:
    cls = {401: openai.AuthenticationError, 429: openai.RateLimitError}[status]
    return cls("no", response=httpx.Response(status, request=REQUEST), body=None)


class AgentRunError(RuntimeError):
    """How a framework reports a failed run."""


async def test_a_rate_limit_past_the_frameworks_retries_is_infrastructure(tmp_path: Path):
    def agent(message: str, session) -> str:
        if session.trial_index % 2:
            raise AgentRunError("model call failed") from refusal(429)
        if session.case_id == "c01":
            raise KeyError("the agent's own bug")
        return ANSWER

    run = await evaluate(
        PythonAgent(agent),
        answer_evalset(2),
        answer_config(),
        runs=4,
        output_dir=tmp_path,
    )
    errors = [result.trial.error for result in run.trials if result.trial.error]
    kinds = sorted(error.kind for error in errors)
    assert kinds == ["exception"] * 2 + ["infrastructure"] * 4
    assert all("HTTP 429" in e.message for e in errors if e.kind == "infrastructure")
    assert run.totals.infrastructure_errors == 4
    assert run.totals.rated_trials == 4 and run.totals.passed == 2  # left out of the rate


async def test_refused_credentials_from_a_framework_stop_the_run(tmp_path: Path):
    def agent(message: str) -> str:
        raise AgentRunError("model call failed") from refusal(401)

    with pytest.raises(ProviderAuthError, match="authentication failed"):
        await evaluate(
            PythonAgent(agent),
            answer_evalset(3),
            answer_config(),
            runs=2,
            max_concurrency=1,
            output_dir=tmp_path,
        )
    (trials,) = tmp_path.glob("faults/*/trials.jsonl")
    assert trials.read_text() == ""  # no trial recorded as the agent's failure
