"""The forms a user writes from the docs work as written: ``evaluate_file`` with ADK's
``agent_module=``/``eval_file=``/``config_file=`` and an agent named by module or folder,
and an expectation-only eval set (the notes example) judged by its expectations alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentflow_eval.agents.base import SessionContext, TrajectoryRecorder, bind_session
from agentflow_eval.evaluator import AgentEvaluator, EvaluationFailed
from agentflow_eval.models.evalset import Message, SessionInput
from agentflow_eval.report.scorecard import format_scorecard
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def at_the_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the snippets use paths relative to the project


# --- the notes example: three expectations, no config ------------------------------------


async def test_the_notes_example_passes_every_trial_with_no_config(tmp_path: Path):
    run = await AgentEvaluator.evaluate_file(
        agent_module="examples.notes.agent",
        eval_file="examples/notes/notes.evalset.json",
        output_dir=tmp_path,
    )
    assert (run.totals.trials, run.totals.passed) == (15, 15)
    labels = {case.case_id: case.label for case in run.cases}
    assert labels == {
        "say-hi": "completes",
        "append-note": "calls session_note_append",
        "add-numbers": 'final contains "7"',
    }
    for case in run.cases:  # judged by its own expectation and nothing else
        assert [c.criterion for c in case.criteria] == [
            {"say-hi": "completes", "append-note": "calls_tool: calls session_note_append"}.get(
                case.case_id, 'final_contains: final contains "7"'
            )
        ]
    scorecard = format_scorecard(run)
    assert (
        "default criteria (no config given): tool_trajectory_avg_score on 0/3 cases, "
        "response_match_score on 0/3 cases"
    ) in scorecard
    notes = [t.trial for t in run.trials if t.trial.case_id == "append-note"]
    assert all(t.final_session_state == {"notes": ["buy milk"]} for t in notes)
    assert not (ROOT / "notes.txt").exists() and not (ROOT / "examples/notes/notes.txt").exists()


async def test_the_notes_agent_named_by_its_folder():
    run = await AgentEvaluator.evaluate_file(
        agent_module="examples/notes", eval_file="examples/notes/notes.evalset.json", runs=1
    )
    assert run.agent == "notes_agent" and run.totals.pass_rate == 1.0


async def test_a_wrong_answer_fails_only_the_expectation_it_breaks(tmp_path: Path):
    agent = tmp_path / "forgetful.py"
    agent.write_text("def agent(message):\n    return 'Hello! 7'\n")
    run = await AgentEvaluator(f"{agent}:agent").evaluate(
        "examples/notes/notes.evalset.json", runs=1, output_dir=tmp_path / "out"
    )
    assert {case.case_id: case.passed for case in run.cases} == {
        "say-hi": 1,
        "append-note": 0,  # never called session_note_append
        "add-numbers": 1,  # the case's final_contains only asks for the 7
    }


async def test_the_notes_tools_on_a_model_write_only_into_the_trial(
    server: ScriptedOpenAIServer, tmp_path: Path
):
    from examples.notes.agent import NOTES_FILE, llm_agent

    server.push(
        Reply.tools(("session_note_append", {"note": "buy milk"})), Reply.text("Noted: buy milk.")
    )
    agent = llm_agent.with_model("openai/scripted", api_base=server.url, api_key="test")
    context = SessionContext(
        case_id="append-note",
        trial_index=0,
        session_id="s",
        session_input=SessionInput(),
        workdir_path=tmp_path / "trial",
    )
    with bind_session(context):
        session = await agent.start_session(context)
        recorder = TrajectoryRecorder()
        answer = await session.respond(Message.of("Remember: buy milk."), recorder)
    assert answer == "Noted: buy milk."
    assert [(c.name, c.args) for c in recorder.tool_calls] == [
        ("session_note_append", {"note": "buy milk"})
    ]
    assert (tmp_path / "trial" / NOTES_FILE).read_text() == "buy milk\n"
    assert session.state == {"notes": ["buy milk"]}
    tools = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert tools == {"session_note_append", "add"}
    schema = json.dumps(server.requests[0]["tools"])
    assert "workdir" not in schema and '"state"' not in schema


# --- AgentEvaluator.evaluate_file exactly as the docs write it ---------------------------


async def test_the_documented_pytest_call_runs_verbatim():
    """The weather example's own files, through ADK's argument names. Its demo model is
    imperfect by design (it measures about 60-80 %), so at the default floor of 100 % the
    call fails the test the way a pytest assertion does, with the measured run attached."""
    with pytest.raises(EvaluationFailed) as failed:
        await AgentEvaluator.evaluate_file(
            agent_module="examples.weather.agent",
            eval_file="examples/weather/weather.evalset.json",
            config_file="examples/weather/eval_config.json",
        )
    run = failed.value.run
    assert run.totals.trials == 10  # the config's 5 runs × 2 cases
    assert run.agent == "weather_agent"
    assert [c.criterion for c in run.criteria] == [
        "tool_trajectory_avg_score",
        "response_match_score",
        "final_response_match_v2",
    ]
    assert "pass rate" in str(failed.value) and "below min_pass_rate 100%" in str(failed.value)
    assert run.totals.pass_rate >= 0.5  # the same call with min_pass_rate=0.5 passes
