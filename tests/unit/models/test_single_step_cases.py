"""Single-step cases as files write them: a seeded history (checked as a chat model would
check it, given to agents in the OpenAI wire format), ``next_step_only``, and component
cases (a function, its input, its expected output) that stand for one turn and one
``output_matches`` expectation without writing either back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agentflow_eval.files.authoring import case_data
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.files.loading import load_evalset
from agentflow_eval.models.evalset import EvalCase, OutputMatches
from agentflow_eval.models.history import HistoryMessage, chat_messages
from agentflow_eval.models.matching import contains, json_equal, json_subset, matches

SEARCHED = [
    {"role": "user", "content": "Flights to Paris?"},
    {"role": "assistant", "tool_calls": [{"id": "c1", "name": "search", "args": {"to": "Paris"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "AF123 at 9:00"},
    {"role": "assistant", "content": "AF123 leaves at 9:00. Book it?"},
]


def case(**fields: Any) -> EvalCase:
    return EvalCase.model_validate({"eval_id": "c", **fields})


def problems_of(tmp_path: Path, *cases: dict[str, Any]) -> list[str]:
    path = tmp_path / "steps.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "steps", "eval_cases": list(cases)}))
    with pytest.raises(EvalFileError) as raised:
        load_evalset(path)
    return [problem.describe() for problem in raised.value.problems]


# --------------------------------------------------------------------------- the history


def test_a_seeded_history_reaches_agents_in_the_openai_wire_format() -> None:
    seeded = case(history=SEARCHED, conversation=[{"user_content": "Yes"}])
    assert chat_messages(seeded.history) == (
        {"role": "user", "content": "Flights to Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"to": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "AF123 at 9:00"},
        {"role": "assistant", "content": "AF123 leaves at 9:00. Book it?"},
    )


def test_a_call_without_an_id_is_answered_by_the_next_tool_message() -> None:
    history = [
        HistoryMessage.model_validate(m)
        for m in [
            {"role": "user", "content": "Weather in Oslo and Rome?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"name": "weather", "args": {"city": "Oslo"}},
                    {"name": "weather", "args": {"city": "Rome"}},
                ],
            },
            {"role": "tool", "content": "rain"},
            {"role": "tool", "content": "sun"},
        ]
    ]
    wire = chat_messages(history)
    made = [call["id"] for call in wire[1]["tool_calls"]]
    assert len(set(made)) == 2
    assert [wire[2]["tool_call_id"], wire[3]["tool_call_id"]] == made


def test_a_transcripts_wire_shaped_calls_are_read_as_written() -> None:
    seeded = case(
        history=[
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "x",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "x", "content": "rain"},
        ],
        conversation=[{"user_content": "And tomorrow?"}],
    )
    call = seeded.history[1].tool_calls[0]
    assert (call.id, call.name, call.args) == ("x", "weather", {"city": "Oslo"})


def test_every_history_problem_names_file_case_and_field(tmp_path: Path) -> None:
    turn = [{"user_content": "Yes"}]
    found = problems_of(
        tmp_path,
        {"eval_id": "robot", "conversation": turn, "history": [{"role": "robot", "content": "x"}]},
        {
            "eval_id": "stray",
            "conversation": turn,
            "history": [*SEARCHED[:3], {"role": "tool", "tool_call_id": "c9", "content": "?"}],
        },
        {"eval_id": "open", "conversation": turn, "history": SEARCHED[:2]},
    )
    assert found[0].startswith(
        "case 'robot': history[0].role: Input should be 'user', 'assistant' or 'tool'"
    )
    assert found[1].startswith(
        "case 'stray': history[3].tool_call_id: answers no tool call an earlier assistant "
        "message made (their ids: 'c1')"
    )
    assert found[2] == (
        "case 'open': history[1].tool_calls[0]: the call of 'search' is never answered: a "
        "tool message with its result must follow it"
    )


def test_fields_of_another_role_are_refused() -> None:
    with pytest.raises(ValidationError, match="only an assistant message makes tool_calls"):
        HistoryMessage.model_validate(
            {"role": "user", "content": "x", "tool_calls": [{"name": "t"}]}
        )
    with pytest.raises(ValidationError, match="tool_call_id is for a tool message"):
        HistoryMessage.model_validate({"role": "user", "content": "x", "tool_call_id": "c1"})


def test_next_step_only_judges_the_step_after_one_turn() -> None:
    assert case(next_step_only=True, conversation=[{"user_content": "Yes"}]).next_step_only
    with pytest.raises(ValidationError, match="this case has 2 turns"):
        case(next_step_only=True, conversation=[{"user_content": "a"}, {"user_content": "b"}])


# ---------------------------------------------------------------------- component cases


def test_a_component_case_stands_for_one_turn_and_an_output_expectation() -> None:
    classify = case(
        component="intents.py:classify", input="Will it rain?", expected_output="weather"
    )
    (turn,) = classify.conversation
    assert turn.invocation_id == "c-1"
    assert turn.user_content.text == "Will it rain?"
    assert turn.expected_final_response is not None
    assert turn.expected_final_response.text == "weather"
    assert classify.expectations == [OutputMatches(expected="weather", match="exact")]
    # neither is a field the author set: writing the case back writes what was written
    assert {"conversation", "expectations"}.isdisjoint(classify.model_fields_set)
    assert case_data(classify) == {
        "eval_id": "c",
        "component": "intents.py:classify",
        "input": "Will it rain?",
        "expected_output": "weather",
    }


def test_a_component_case_with_keyword_arguments_and_json_values() -> None:
    route = case(
        component="routing:route",
        arguments={"text": "refund", "user": {"tier": "gold"}},
        expected_output={"queue": "billing"},
        output_match="json_subset",
        expectations=["completes"],
    )
    assert route.call_arguments == ((), {"text": "refund", "user": {"tier": "gold"}})
    assert json.loads(route.conversation[0].user_content.text) == route.arguments
    assert route.expectations[-1] == OutputMatches(
        expected={"queue": "billing"}, match="json_subset"
    )
    written = case_data(route)
    assert written["expectations"] == [{"type": "completes"}]  # the author's, not ours
    assert "conversation" not in written


def test_a_component_case_dumped_whole_reads_the_same() -> None:
    original = case(component="m:f", input=None, expected_output=None, output_match="contains")
    again = EvalCase.model_validate(original.model_dump())
    assert again.conversation == original.conversation
    assert again.expectations == original.expectations  # not added twice
    assert again.call_arguments == ((None,), {})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"component": "nocolon", "input": 1, "expected_output": 1}, "is not 'module:attr'"),
        ({"component": "m:f", "expected_output": 1}, "needs 'input'"),
        ({"component": "m:f", "input": 1, "arguments": {"a": 1}, "expected_output": 1}, "not both"),
        ({"component": "m:f", "input": 1}, "needs 'expected_output'"),
        (
            {"component": "m:f", "input": 1, "expected_output": 1, "history": SEARCHED},
            "takes no 'history'",
        ),
        (
            {
                "component": "m:f",
                "input": 1,
                "expected_output": 1,
                "conversation": [{"user_content": "x"}],
            },
            "takes no 'conversation'",
        ),
        (
            {"conversation": [{"user_content": "x"}], "expected_output": "y"},
            "'expected_output' is for a component case",
        ),
    ],
)
def test_a_component_case_is_checked(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        case(**fields)


# ----------------------------------------------------------------------------- matching


def test_exact_is_json_equality() -> None:
    assert json_equal(1, 1.0) and json_equal({"a": [1, "x"]}, {"a": [1.0, "x"]})
    assert not json_equal(True, 1) and not json_equal("1", 1)
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})


def test_contains_is_a_substring_or_an_element() -> None:
    assert contains("rain", "heavy rain today")
    assert contains({"a": 1}, [{"a": 1.0}, 2]) and not contains({"a": 1}, [{"a": 2}])
    assert contains(3, "a 3 b") and not contains("x", 5)


def test_json_subset_takes_every_expected_key_recursively() -> None:
    assert json_subset({"q": {"city": "Oslo"}}, {"q": {"city": "Oslo", "days": 2}, "x": 1})
    assert not json_subset({"q": {"city": "Oslo"}}, {"q": "Oslo"})
    assert matches("json_subset", {"n": 1}, {"n": 1.0, "m": 2})
    assert not matches("exact", {"n": 1}, {"n": 1.0, "m": 2})
