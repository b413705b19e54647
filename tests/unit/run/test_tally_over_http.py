"""Pass-rate tallies through the real path: the LiteLLM agent, the model client, HTTP to
a scripted OpenAI-compatible server on 127.0.0.1. A scripted model that runs out of replies
fails that trial, and the failure counts in the denominator."""

from __future__ import annotations

import pytest

from agentflow_eval.agents import LiteLLMAgent
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

EVALSET = EvalSet.model_validate(
    {
        "eval_set_id": "tally",
        "eval_cases": [
            {
                "eval_id": "say-hi",
                "conversation": [{"user_content": "Say hi in one short sentence."}],
                "expectations": ["completes"],
            }
        ],
    }
)


@pytest.fixture
def server():
    with ScriptedOpenAIServer() as scripted:
        yield scripted


def agent(server: ScriptedOpenAIServer) -> LiteLLMAgent:
    return LiteLLMAgent("openai/scripted", api_base=server.url, api_key="test")


async def _run(server, runs, tmp_path):
    return await evaluate(
        agent(server),
        EVALSET,
        EvalConfig(),
        output_dir=tmp_path,
        runs=runs,
        max_concurrency=1,
    )


async def test_run_eval_tallies_the_pass_rate(server, tmp_path):
    server.push(Reply.text("a"), Reply.text("b"))
    run = await _run(server, 2, tmp_path)
    (case,) = run.cases
    assert (case.passed, case.runs) == (2, 2)
    assert case.label == "completes"
    assert server.request_count == 2


async def test_run_eval_counts_failures_in_the_rate(server, tmp_path):
    server.push(Reply.text("a"))  # one reply for two runs: the second finds none
    run = await _run(server, 2, tmp_path)
    (case,) = run.cases
    assert (case.passed, case.runs, case.errored) == (1, 2, 1)
    (failed,) = [t for t in run.trials if not t.passed]
    assert failed.status == "errored"
    assert "no replies left" in failed.trial.error.message
