"""Fault matrix, area 2 — provider faults are not agent failures.

Against the scripted server's fault injection (on the default transport; both transports
meet these faults alike: tests/unit/llm/test_transport_contract.py):

- 20% of agent, simulated-user and judge requests failing with 429, 500, 503 or a 200
  that is not a completion leave the pass rate where it is without faults;
- a fault that outlasts its retries makes the trial an *infrastructure* error, left out
  of the pass rate unless the run counts it — even when the agent wrapped it;
- refused credentials (401/403) stop the run at once: for the agent's model, no trial
  that met them is kept; for the judge, the first refusal ends judging.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.files.jsonl import iter_records
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.llm.openai_direct import ModelConnectionError, ModelHTTPError, ModelTimeout
from agentflow_eval.llm.retry import (
    MalformedReply,
    ProviderAuthError,
    ProviderUnavailable,
    RetryPolicy,
    classify,
    provider_error_in,
)
from agentflow_eval.models.config import EvalConfig, UserSimulatorConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import Trial, TrialResult
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.report.scorecard import format_scorecard
from agentflow_eval.run.user_turns import FINISHED
from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from tests.support.faults import ANSWER, FaultyModel, answer_config, answer_evalset

FAST = RetryPolicy(max_retries=4, base_delay_s=0.01, max_delay_s=0.05)


def model_agent(server: ScriptedOpenAIServer) -> LiteLLMAgent:
    return LiteLLMAgent("openai/agent-model", api_base=server.url, api_key="test")


async def run_with(
    server: ScriptedOpenAIServer,
    tmp_path: Path,
    eval_set: EvalSet,
    config: EvalConfig | None = None,
    agent: Any = None,
    **options: Any,
):
    async with ModelClient(retry=FAST) as models:
        run = await evaluate(
            agent or model_agent(server),
            eval_set,
            config or answer_config(),
            **{"runs": 2, "max_concurrency": 8, **options},
            output_dir=tmp_path,
            models=models,
        )
    return run, models


async def test_twenty_percent_transient_faults_leave_the_pass_rate_unchanged(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.handler = lambda body: Reply.text(ANSWER)
    clean, _ = await run_with(server, tmp_path / "clean", answer_evalset(20))
    faulty = FaultyModel(every=5)
    server.handler = faulty
    run, models = await run_with(server, tmp_path / "faulty", answer_evalset(20))
    assert faulty.faults_injected >= 8 and set(faulty.injected) == {
        "429",
        "500",
        "503",
        "200-not-json",
    }
    assert run.totals.trials == 40 and run.totals.errored == 0
    assert run.totals.pass_rate == clean.totals.pass_rate == 1.0
    assert models.stats.retries == faulty.faults_injected


async def test_a_fault_that_outlasts_its_retries_is_an_infrastructure_error(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    data = answer_evalset(4).model_dump(mode="json")
    data["eval_cases"][0]["conversation"][0]["user_content"] = "the provider is down"
    eval_set = EvalSet.model_validate(data)

    def handler(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["content"] == "the provider is down":
            return Reply.error(503, "overloaded", headers={"retry-after-ms": "1"})
        return Reply.text(ANSWER)

    server.handler = handler
    run, models = await run_with(server, tmp_path / "default", eval_set)
    down = run.cases[0]
    assert (down.runs, down.errored, down.infrastructure_errors) == (2, 2, 2)
    assert down.pass_rate == 0.0  # nothing counted: no rate, not a failure
    assert run.totals.infrastructure_errors == 2 and run.totals.pass_rate == 1.0  # 6 of 6
    errors = [t.trial.error for t in run.trials if t.trial.error]
    assert all(e.kind == "infrastructure" for e in errors)
    assert "unavailable (HTTP 503)" in errors[0].message
    assert "5 attempts, retries exhausted" in errors[0].message
    assert models.stats.provider_failures == 2
    assert "2 trials errored (2 by the model provider, left out of the rate)" in format_scorecard(
        run
    )

    counted, _ = await run_with(
        server, tmp_path / "counted", eval_set, count_infrastructure_errors=True
    )
    assert counted.totals.pass_rate == 6 / 8  # the provider's failures count as failures


async def test_an_agent_that_wraps_the_fault_still_records_infrastructure(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.handler = lambda body: Reply.error(500, "down", headers={"retry-after-ms": "1"})

    async def wrapping_agent(message: str, session) -> str:  # type: ignore[no-untyped-def]
        try:
            reply = await session.models.complete(
                model="openai/agent-model",
                messages=[{"role": "user", "content": message}],
                api_base=server.url,
                api_key="test",
            )
        except Exception as exc:
            raise RuntimeError("my agent could not think") from exc
        return str(reply.choices[0].message.content)

    run, _ = await run_with(
        server, tmp_path, answer_evalset(2), agent=PythonAgent(wrapping_agent), runs=1
    )
    assert [t.trial.error.kind for t in run.trials if t.trial.error] == ["infrastructure"] * 2
    assert run.totals.infrastructure_errors == 2


async def test_simulated_user_calls_are_retried_too(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    faulty = FaultyModel(every=2, answer=lambda body: Reply.text(FINISHED))
    server.handler = faulty
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "sim",
            "eval_cases": [
                {
                    "eval_id": f"s{i}",
                    "conversation_scenario": {
                        "starting_prompt": "hello",
                        "conversation_plan": "say hello, then finish",
                    },
                    "expectations": ["completes"],
                }
                for i in range(4)
            ],
        }
    )
    config = EvalConfig(
        user_simulator_config=UserSimulatorConfig.model_validate(
            {"model": "openai/simulator", "api_base": server.url, "api_key": "t"}
        )
    )

    class Echo:
        name = "echo"

        async def start_session(self, context: Any) -> Any:
            return self

        async def respond(self, message: Any, recorder: Any) -> str:
            return f"you said {message.text}"

        async def aclose(self) -> None:
            pass

    run, _ = await run_with(server, tmp_path, eval_set, config, agent=Echo(), runs=1)
    assert faulty.faults_injected >= 1
    assert run.totals.passed == 4 and run.totals.errored == 0


async def test_refused_agent_credentials_stop_the_run(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.handler = lambda body: Reply.error(401, "Incorrect API key provided")
    with pytest.raises(ProviderAuthError, match=r"authentication failed \(HTTP 401\)") as info:
        await run_with(server, tmp_path, answer_evalset(20), max_concurrency=4)
    assert server.request_count <= 4  # at most the calls already in flight
    [run_dir] = list((tmp_path / "faults").iterdir())
    assert info.value.run_dir == str(run_dir)
    assert list(iter_records(run_dir / "trials.jsonl", Trial)) == []  # resume runs them all
    assert not (run_dir / "judged.jsonl").exists() or not (run_dir / "judged.jsonl").read_text()


async def test_a_judge_401_stops_judging_at_the_first_call(
    server: ScriptedOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAULT_TEST_JUDGE_KEY", "judge-key-123456")

    def handler(body: dict[str, Any]) -> Reply:
        if body["model"] == "judge-model":
            return Reply.error(401, "invalid judge key")
        return Reply.text(ANSWER)

    server.handler = handler
    config = EvalConfig.model_validate(
        {
            "criteria": {"final_response_match_v2": {"num_samples": 3}},
            "judge": {
                "model": "openai/judge-model",
                "api_base": server.url,
                "api_key_env": "FAULT_TEST_JUDGE_KEY",
                "max_concurrency": 1,
            },
        }
    )
    with pytest.raises(ProviderAuthError, match=r"judge openai/judge-model: authentication"):
        await run_with(server, tmp_path, answer_evalset(10), config)
    judge_requests = [r for r in server.requests if r["model"] == "judge-model"]
    assert len(judge_requests) == 1  # not 10 trials x 3 samples
    [run_dir] = list((tmp_path / "faults").iterdir())
    assert len(list(iter_records(run_dir / "trials.jsonl", Trial))) == 20  # trials are kept
    assert list(iter_records(run_dir / "judged.jsonl", TrialResult)) == []  # nothing judged


# ----------------------------------------------------------------- the policy itself


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ModelHTTPError(429, "slow", {}), "transient"),
        (ModelHTTPError(408, "timeout", {}), "transient"),
        (ModelHTTPError(500, "oops", {}), "transient"),
        (ModelHTTPError(529, "overloaded", {}), "transient"),
        (ModelHTTPError(401, "key", {}), "auth"),
        (ModelHTTPError(403, "forbidden", {}), "auth"),
        (ModelHTTPError(400, "bad", {}), "rejected"),
        (ModelHTTPError(404, "no model", {}), "rejected"),
        (ModelTimeout("slow"), "transient"),
        (ModelConnectionError("refused"), "transient"),
        (MalformedReply("not JSON"), "transient"),
        (ValueError("a bug of ours"), "rejected"),
    ],
)
def test_each_failure_is_classified(error: Exception, kind: str) -> None:
    assert classify(error).kind == kind


def test_a_key_never_given_is_an_authentication_failure() -> None:
    # what LiteLLM raises (as an HTTP 500) when no API key reaches the OpenAI SDK
    missing = RuntimeError("OpenAIException - Missing credentials. Please pass an `api_key`")
    assert classify(missing).kind == "auth"


def test_the_wait_honours_the_server_and_caps_the_backoff() -> None:
    policy = RetryPolicy(max_retries=5, base_delay_s=1.0, max_delay_s=10.0)
    assert policy.delay(1, retry_after_s=0.25) == 0.25
    assert policy.delay(1, retry_after_s=99.0) == 10.0
    rng = random.Random(7)
    for attempt, base in ((1, 1.0), (2, 2.0), (3, 4.0), (6, 10.0)):
        waits = [policy.delay(attempt, None, rng) for _ in range(200)]
        assert base / 2 <= min(waits) and max(waits) <= base  # jitter in [50%, 100%]


def test_retry_after_is_read_from_either_header() -> None:
    from agentflow_eval.llm.retry import retry_after_s

    assert retry_after_s(ModelHTTPError(429, "", {"retry-after-ms": "250"})) == 0.25
    assert retry_after_s(ModelHTTPError(429, "", {"Retry-After": "3"})) == 3.0
    assert retry_after_s(ModelHTTPError(429, "", {"Retry-After": "soon"})) is None


def test_a_wrapped_provider_error_is_found() -> None:
    cause = ProviderUnavailable("down")
    try:
        try:
            raise cause
        except ProviderUnavailable as exc:
            raise RuntimeError("agent failed") from exc
    except RuntimeError as outer:
        assert provider_error_in(outer) is cause
    assert provider_error_in(ExceptionGroup("g", [ValueError(), cause])) is cause
    assert provider_error_in(ValueError("plain")) is None
