"""The simulated user plays a conversation_scenario case against the agent, through the
model client to a scripted server, and stops when its plan is done or at the turn limit."""

from __future__ import annotations

import pytest

from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.models.config import EvalConfig, UserSimulatorConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.run.user_turns import FINISHED
from agentflow_eval.testing import Reply, ScriptedOpenAIServer


class EchoAgent:
    name = "echo"

    async def start_session(self, context):
        return self

    async def respond(self, message, recorder):
        return f"you said: {message.text}"

    async def aclose(self):
        pass


def scenario_set() -> EvalSet:
    return EvalSet.model_validate(
        {
            "eval_set_id": "sim",
            "eval_cases": [
                {
                    "eval_id": "book",
                    "conversation_scenario": {
                        "starting_prompt": "I want to book a table.",
                        "conversation_plan": "Ask for a table for two at 7pm, then confirm.",
                    },
                    "expectations": ["completes"],
                }
            ],
        }
    )


async def test_the_simulated_user_follows_the_plan_until_it_is_finished(tmp_path):
    with ScriptedOpenAIServer([Reply.text("For two at 7pm."), Reply.text(FINISHED)]) as server:
        config = EvalConfig(
            user_simulator_config=UserSimulatorConfig.model_validate(
                {"model": "openai/simulator", "api_base": server.url, "api_key": "test"}
            )
        )
        run = await evaluate(EchoAgent(), scenario_set(), config, output_dir=tmp_path, runs=1)
        requests = list(server.requests)
    (trial,) = run.trials
    assert trial.status == "passed"
    assert [t.user_text for t in trial.trial.turns] == [
        "I want to book a table.",
        "For two at 7pm.",
    ]
    # the simulator saw the plan and the agent's answer (roles mirrored)
    first = requests[0]["messages"]
    assert "table for two at 7pm" in first[0]["content"]
    assert first[-1] == {"role": "user", "content": "you said: I want to book a table."}


async def test_the_turn_limit_ends_a_conversation_that_never_finishes(tmp_path):
    with ScriptedOpenAIServer([Reply.text("more"), Reply.text("more")]) as server:
        config = EvalConfig(
            user_simulator_config=UserSimulatorConfig.model_validate(
                {
                    "model": "openai/s",
                    "api_base": server.url,
                    "api_key": "t",
                    "max_allowed_invocations": 3,
                }
            )
        )
        run = await evaluate(EchoAgent(), scenario_set(), config, output_dir=tmp_path, runs=1)
    assert len(run.trials[0].trial.turns) == 3


async def test_a_scenario_without_a_simulator_is_refused_before_any_trial(tmp_path):
    with pytest.raises(EvalFileError) as refused:
        await evaluate(
            EchoAgent(),
            scenario_set(),
            EvalConfig(),
            output_dir=tmp_path,
        )
    assert refused.value.field == "conversation_scenario"
    assert refused.value.case_id == scenario_set().eval_cases[0].eval_id
    assert "needs user_simulator_config" in str(refused.value)
    assert not any(tmp_path.iterdir())  # no run folder, no trial


async def test_adks_minus_one_sets_no_turn_limit(tmp_path):
    # more turns than the default limit (10): only the simulated user's FINISHED ends it
    replies = [Reply.text(f"more {n}") for n in range(12)] + [Reply.text(FINISHED)]
    with ScriptedOpenAIServer(replies) as server:
        settings = UserSimulatorConfig.model_validate(
            {
                "model": "openai/s",
                "api_base": server.url,
                "api_key": "t",
                "maxAllowedInvocations": -1,
            }
        )
        assert settings.max_allowed_invocations is None
        run = await evaluate(
            EchoAgent(),
            scenario_set(),
            EvalConfig(user_simulator_config=settings),
            output_dir=tmp_path,
            runs=1,
        )
    assert len(run.trials[0].trial.turns) == 13
