"""``agentflow-eval eval-set``: a case added from a trial of a run (or from a chat
transcript) passes when the same agent runs it again; every problem of a file is listed;
native -> ADK -> native loses nothing both formats hold, and ADK 2.13 reads our ADK
output as we do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.cli import main
from agentflow_eval.criteria.coverage import unjudged_warnings
from agentflow_eval.files.convert import convert
from agentflow_eval.files.loading import load_evalset
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.pipeline.evaluate import evaluate

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
ORDERS = {"A-1": "shipped", "B-2": "processing"}


def order_agent(message: str, recorder, history) -> str:
    for word in message.replace("?", " ").split():
        if word in ORDERS:
            with recorder.tool("lookup_order", {"order_id": word}) as call:
                call.result = ORDERS[word]
            return f"Order {word} is {call.result}."
    return "Which order?" if not history else "Anything else?"


EVALSET = {
    "eval_set_id": "orders",
    "eval_cases": [
        {
            "eval_id": "a1",
            "conversation": [
                {"user_content": "Where is A-1?"},
                {"user_content": "Thanks"},
            ],
            "expectations": [{"type": "completes"}],
        }
    ],
}
STRICT = EvalConfig.model_validate(
    {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 1.0}}
)


async def test_a_case_added_from_a_trial_passes_when_the_agent_runs_it_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "orders.evalset.json"
    source.write_text(json.dumps(EVALSET))
    first = await evaluate(
        PythonAgent(order_agent),
        load_evalset(source).eval_set,
        EvalConfig.model_validate({"criteria": {}}),
        runs=2,
        output_dir=tmp_path / "out",
    )
    (run_dir,) = (tmp_path / "out" / "orders").iterdir()
    target = tmp_path / "regressions.evalset.yaml"
    assert main(["eval-set", "create", str(target), "--name", "Regressions"]) == 0
    assert main(["eval-set", "add", str(target), "--from-session", f"{run_dir}#a1/2"]) == 0
    printed = capsys.readouterr().out
    assert "added case 'session-1'" in printed and "2 turn(s), 1 tool call(s)" in printed
    added = load_evalset(target).eval_set
    (case,) = added.eval_cases
    assert [t.user_content.text for t in case.conversation] == ["Where is A-1?", "Thanks"]
    assert [c.name for c in case.conversation[0].expected_tool_trajectory] == ["lookup_order"]
    assert case.conversation[0].expected_final_response.text == "Order A-1 is shipped."
    assert case.metadata == {"from_session": f"{run_dir}#a1/2"}
    again = await evaluate(
        PythonAgent(order_agent), added, STRICT, runs=3,
        output_dir=tmp_path / "again",
    )  # fmt: skip
    assert again.totals.passed == 3 == again.totals.trials
    assert first.totals.trials == 2
    # the same id again is refused, and the file is left as it was
    before = target.read_text()
    assert main(["eval-set", "add", str(target), "--from-session", f"{run_dir}#a1/1",
                 "--case-id", "session-1"]) == 2  # fmt: skip
    assert "already has a case with id 'session-1'" in capsys.readouterr().err
    assert target.read_text() == before


async def test_a_case_from_a_chat_transcript_passes_against_the_agent(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps(
            [
                {"role": "user", "content": "Status of B-2?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "x",
                            "type": "function",
                            "function": {
                                "name": "lookup_order",
                                "arguments": '{"order_id": "B-2"}',
                            },
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "x", "content": "processing"},
                {"role": "assistant", "content": "Order B-2 is processing."},
            ]
        )
    )
    target = tmp_path / "chats.evalset.json"
    assert main(["eval-set", "create", str(target)]) == 0
    assert main(["eval-set", "add", str(target), "--from-session", str(chat),
                 "--case-id", "b2", "--expect", "tools,answer"]) == 0  # fmt: skip
    run = await evaluate(
        PythonAgent(order_agent), load_evalset(target).eval_set, STRICT,
        runs=2, output_dir=tmp_path / "out",
    )  # fmt: skip
    assert run.totals.passed == 2


def test_validate_lists_every_problem_of_every_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.evalset.json"
    bad.write_text(
        json.dumps(
            {
                "eval_set_id": "bad",
                "eval_cases": [
                    {"eval_id": "a", "conversation": [{"user_content": "hi", "oops": 1}]},
                    {"eval_id": "b", "conversation": [{"user_contnt": "hi"}]},
                    {"eval_id": "a", "conversation": [{"user_content": "again"}]},
                ],
            }
        )
    )
    config = tmp_path / "strict_config.json"
    config.write_text(
        json.dumps(
            {
                "criteria": {
                    "tool_trajectory_avg_score": {"match_type": "SOMETIMES"},
                    "no_such_criterion": 0.5,
                }
            }
        )
    )
    good = tmp_path / "good.evalset.json"
    good.write_text(json.dumps(EVALSET))
    assert main(["eval-set", "validate", str(bad), str(config), str(good)]) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) >= 5, err
    assert all(line.startswith((str(bad), str(config))) for line in lines)
    assert any("case 'a'" in line and "oops" in line for line in lines)
    assert any("user_contnt" in line for line in lines)
    assert any("appears more than once" in line or "'a'" in line for line in lines)
    assert any("match_type" in line for line in lines)
    assert any("no_such_criterion" in line for line in lines)
    assert out.splitlines() == [
        f"{good}: eval set 'orders', 1 case, 2 turns, 0 expected tool calls; judged by the "
        "default criteria (2 criteria)"
    ]
    assert main(["eval-set", "validate", str(good)]) == 0


def test_native_to_adk_to_native_loses_nothing_and_adk_reads_it_as_we_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rich = FIXTURES / "convert" / "rich.evalset.json"
    eval_set = load_evalset(rich).eval_set
    adk_file = tmp_path / "rich.adk.json"
    assert main(["eval-set", "convert", str(rich), "--to", "adk", "-o", str(adk_file)]) == 0
    written = json.loads(adk_file.read_text())
    # what ADK 2.13's own models read from this very output (tests/fixtures/convert/)
    assert written == json.loads((FIXTURES / "convert" / "rich.adk.json").read_text())
    adk_read = json.loads((FIXTURES / "convert" / "adk_reads.json").read_text())
    ours = load_evalset(adk_file).eval_set
    for case, seen in zip(ours.eval_cases, adk_read["cases"], strict=True):
        assert case.eval_id == seen["eval_id"]
        for turn, adk_turn in zip(case.conversation, seen["turns"], strict=True):
            assert turn.user_content.text == adk_turn["user"]
            assert [{"name": c.name, "args": c.args} for c in turn.expected_tool_trajectory] == (
                adk_turn["tool_uses"]
            )
            final = turn.expected_final_response
            assert (final.text if final else None) == adk_turn["final"]
    back = tmp_path / "back.evalset.json"
    assert main(["eval-set", "convert", str(adk_file), "--to", "native", "-o", str(back)]) == 0
    assert load_evalset(back).eval_set == eval_set
    capsys.readouterr()
    with_steps = eval_set.model_copy(deep=True)
    with_steps.eval_cases[0].conversation[0].expected_nodes = ["router", "weather"]
    _, lost = convert(with_steps, "adk")
    assert lost == [
        "ADK's invocations cannot hold expected_nodes: left out of 1 turn(s) "
        "(two_turns/two_turns-1)"
    ]


def test_single_step_cases_validate_and_convert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "intents.py").write_text("def classify(text):\n    return 'other'\n")
    seeded = {
        "eval_id": "books_next",
        "history": [
            {"role": "user", "content": "Flights to Paris?"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "name": "search", "args": {}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "AF123"},
        ],
        "next_step_only": True,
        "conversation": [{"user_content": "Book it"}],
        "expectations": ["completes"],
    }
    component = {
        "eval_id": "hello",
        "component": f"{tmp_path / 'intents.py'}:classify",
        "input": "Hello",
        "expected_output": "greeting",
    }
    source = tmp_path / "steps.evalset.json"
    source.write_text(json.dumps({"eval_set_id": "steps", "eval_cases": [seeded, component]}))

    assert main(["eval-set", "validate", str(source)]) == 0
    assert capsys.readouterr().out == (
        f"{source}: eval set 'steps', 2 cases, 1 turn, 0 expected tool calls, 1 component "
        "case; judged by the default criteria (2 criteria)\n"
    )
    adk_file = tmp_path / "steps.adk.json"
    assert main(["eval-set", "convert", str(source), "--to", "adk", "-o", str(adk_file)]) == 0
    out, err = capsys.readouterr()
    assert out == f"wrote {adk_file} (adk, 1 cases)\n"
    assert err == (
        "note: ADK cannot run a component case (a function, not an agent): left out 1 case(s) "
        "(hello)\n"
    )
    # the seeded history and next_step_only go across as case keys ADK keeps, and back
    back = tmp_path / "back.evalset.json"
    assert main(["eval-set", "convert", str(adk_file), "--to", "native", "-o", str(back)]) == 0
    (read_back,) = load_evalset(back).eval_set.eval_cases
    assert read_back == load_evalset(source).eval_set.eval_cases[0]
    native = tmp_path / "native.evalset.json"
    assert main(["eval-set", "convert", str(source), "--to", "native", "-o", str(native)]) == 0
    written = json.loads(native.read_text())["eval_cases"]
    assert written[1] == component  # as its author wrote it: no turn, no expectation added

    component["component"] = "intents_nowhere:classify"
    source.write_text(json.dumps({"eval_set_id": "steps", "eval_cases": [seeded, component]}))
    capsys.readouterr()
    assert main(["eval-set", "validate", str(source)]) == 2
    assert capsys.readouterr().err.startswith(
        f"{source}: case 'hello': component: 'intents_nowhere:classify': importing "
        "'intents_nowhere' failed: ModuleNotFoundError"
    )


def test_validate_reports_expectations_no_criterion_judges_as_run_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The warning ``run`` gives before it starts, from the same function."""
    evalset = tmp_path / "nodes.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "nodes",
                "eval_cases": [
                    {
                        "eval_id": "tokyo",
                        "conversation": [
                            {
                                "user_content": "Weather in Tokyo?",
                                "expected_tool_trajectory": [
                                    {"name": "get_weather", "args": {"location": "Tokyo"}}
                                ],
                                "expected_nodes": ["agent", "tools", "agent"],
                            }
                        ],
                        "final_session_state": {"visits": 1},
                    }
                ],
            }
        )
    )
    assert main(["eval-set", "validate", str(evalset)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"{evalset}: eval set 'nodes'")
    warned = err.splitlines()
    expected = unjudged_warnings(load_evalset(evalset).eval_set, EvalConfig.default())
    assert warned == [f"{evalset}: warning: {warning}" for warning in expected]
    assert len(warned) == 2
    assert "expected_nodes is given by 1 case(s) but no criterion judges it" in warned[0]
    assert "node_trajectory_avg_score" in warned[0]
    assert "final_session_state is given by 1 case(s)" in warned[1]
    judging = tmp_path / "judging_config.json"
    judging.write_text(
        json.dumps(
            {
                "criteria": {
                    "tool_trajectory_avg_score": 1.0,
                    "node_trajectory_avg_score": 1.0,
                    "final_session_state_match": 1.0,
                }
            }
        )
    )
    assert main(["eval-set", "validate", str(evalset), "--config", str(judging)]) == 0
    assert capsys.readouterr().err == ""


def stepping_agent(message: str, recorder, state: dict) -> str:
    recorder.node("agent")
    with recorder.tool("lookup_order", {"order_id": "A-1"}) as call:
        call.result = ORDERS["A-1"]
    recorder.node("answer")
    state["asked"] = state.get("asked", 0) + 1
    return f"Order A-1 is {call.result}."


async def test_a_case_from_a_session_expects_by_default_what_the_criteria_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "orders.evalset.json"
    source.write_text(
        json.dumps(
            {
                "eval_set_id": "orders",
                "eval_cases": [
                    {
                        "eval_id": "a1",
                        "conversation": [{"user_content": "Where is A-1?"}],
                        "expectations": [{"type": "completes"}],
                    }
                ],
            }
        )
    )
    await evaluate(
        PythonAgent(stepping_agent),
        load_evalset(source).eval_set,
        EvalConfig.model_validate({"criteria": {}}),
        runs=1,
        output_dir=tmp_path / "out",
    )
    (run_dir,) = (tmp_path / "out" / "orders").iterdir()
    target = tmp_path / "regressions.evalset.json"
    assert main(["eval-set", "create", str(target)]) == 0
    capsys.readouterr()
    trial = f"{run_dir}#a1/1"
    assert main(["eval-set", "add", str(target), "--from-session", trial]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == (
        f"added case 'session-1' to {target}: 1 turn(s), 1 tool call(s), 1 reference answer(s)"
    )
    (case,) = load_evalset(target).eval_set.eval_cases
    assert [c.name for c in case.conversation[0].expected_tool_trajectory] == ["lookup_order"]
    assert case.conversation[0].expected_final_response is not None
    assert case.conversation[0].expected_nodes == [] and case.final_session_state is None
    assert err.splitlines() == [
        "note: not written: the session's 2 step(s) (expected_nodes), which nothing in the "
        "default criteria judges (add node_trajectory_avg_score to the config's criteria)",
        "note: not written: the session's final state with 1 key(s) (final_session_state), "
        "which nothing in the default criteria judges (add final_session_state_match to the "
        "config's criteria)",
        "note: --expect tools,nodes,answer,state writes them too (with criteria to judge them)",
    ]
    # what validate and run say of the file: nothing unjudged
    assert main(["eval-set", "validate", str(target)]) == 0
    assert capsys.readouterr().err == ""
    # asked for, everything is written
    assert main(["eval-set", "add", str(target), "--from-session", trial, "--case-id", "all",
                 "--expect", "tools,nodes,answer,state"]) == 0  # fmt: skip
    assert capsys.readouterr().err == ""
    everything = load_evalset(target).eval_set.eval_cases[1]
    assert everything.conversation[0].expected_nodes == ["agent", "answer"]
    assert everything.final_session_state == {"asked": 1}
