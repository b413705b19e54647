"""A trial records the agent's session state as the conversation ended, for the
final_session_state_match criterion."""

from __future__ import annotations

from pathlib import Path

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.evalset import EvalCase
from agentflow_eval.models.results import Trial
from agentflow_eval.run.trial import TrialSettings, run_trial
from agentflow_eval.run.user_turns import ScriptedTurns


def notes_case() -> EvalCase:
    return EvalCase.model_validate(
        {
            "eval_id": "notes",
            "conversation": [{"user_content": "remember milk"}, {"user_content": "and eggs"}],
            "session_input": {"app_name": "notes", "user_id": "u", "state": {"notes": []}},
            "final_session_state": {"notes": ["milk", "eggs"]},
        }
    )


async def trial_of(agent: AgentUnderTest, case: EvalCase, workroot: Path) -> Trial:
    settings = TrialSettings(workroot=workroot)
    return await run_trial(agent, case, 0, settings, ScriptedTurns(case), ModelClient())


def remember(message: str, state: dict) -> str:
    state["notes"].append(message.split()[-1])
    return "noted"


async def test_the_final_state_of_a_python_agent_is_recorded(tmp_path: Path):
    case = notes_case()
    trial = await trial_of(PythonAgent(remember), case, tmp_path)
    assert trial.error is None
    assert trial.final_session_state == {"notes": ["milk", "eggs"]}
    # each trial starts from the case's own state, which the agent never touches
    assert case.session_input is not None and case.session_input.state == {"notes": []}


async def test_the_state_is_recorded_when_the_agent_fails_and_kept_json_ready(tmp_path: Path):
    def fails_on_second_turn(message: str, state: dict) -> str:
        state["seen"] = state.get("seen", 0) + 1
        state["when"] = object()  # not JSON: recorded as its repr
        if state["seen"] == 2:
            raise RuntimeError("boom")
        return "ok"

    trial = await trial_of(PythonAgent(fails_on_second_turn), notes_case(), tmp_path)
    assert trial.error is not None and trial.error.kind == "exception"
    assert trial.final_session_state is not None
    assert trial.final_session_state["seen"] == 2
    assert trial.final_session_state["when"].startswith("<object object")
    assert trial.model_dump(mode="json")["final_session_state"]["notes"] == []
