"""to_adk_evalset writes what ADK's loader reads (snake_case, user_content.parts,
final_response, intermediate_data.tool_uses, no nulls), and reading it back gives the
same eval set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.files.adk import to_adk_evalset
from agentflow_eval.files.loading import load_evalset
from agentflow_eval.models.evalset import EvalSet

FIXTURES = Path(__file__).parents[2] / "fixtures"
ADK_SOURCES = [
    "adk/thermostat.evalset.json",
    "adk/card_support.evalset.json",
    "adk/trip_scenarios.evalset.json",
    "adk/legacy/unit_converter.test.json",
    "adk/legacy/recipes.evalset.json",
]


def _written_and_read(eval_set: EvalSet, tmp_path: Path) -> tuple[dict[str, Any], EvalSet]:
    data = to_adk_evalset(eval_set)
    path = tmp_path / f"{eval_set.eval_set_id}.evalset.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return data, load_evalset(path).eval_set


@pytest.mark.parametrize("source", ADK_SOURCES)
def test_adk_files_round_trip(source: str, tmp_path: Path):
    original = load_evalset(FIXTURES / source).eval_set
    _, again = _written_and_read(original, tmp_path)
    # ADK dumps carry null part fields (video_metadata: null, ...); those are not written
    assert again.model_dump(exclude_none=True) == original.model_dump(exclude_none=True)
    if source != "adk/card_support.evalset.json":  # the one fixture with such nulls
        assert again == original


def test_native_file_round_trips_with_adk_roles(tmp_path: Path):
    original = load_evalset(FIXTURES / "weather.evalset.json").eval_set
    data, again = _written_and_read(original, tmp_path)

    first = data["eval_cases"][0]["conversation"][0]
    assert first["final_response"]["role"] == "model"  # native "assistant" → ADK "model"
    for case_before, case_after in zip(original.eval_cases, again.eval_cases, strict=True):
        for before, after in zip(case_before.conversation, case_after.conversation, strict=True):
            assert after.expected_final_response is not None
            assert before.expected_final_response is not None
            assert after.expected_final_response.role == "model"
            after.expected_final_response.role = "assistant"
    assert again == original


def test_expectation_fields_survive_the_round_trip(tmp_path: Path):
    original = load_evalset(FIXTURES / "yaml" / "arithmetic.evalset.yml").eval_set
    data, again = _written_and_read(original, tmp_path)

    add = next(c for c in data["eval_cases"] if c["eval_id"] == "add-numbers")
    assert add["expectations"] == [
        {"type": "final_contains", "text": "7", "case_sensitive": True},
        {"type": "calls_tool", "name": "add"},
    ]
    assert again == original


def test_written_shape_is_adk_snake_case_without_nulls():
    eval_set = load_evalset(FIXTURES / "adk" / "thermostat.evalset.json").eval_set
    data = to_adk_evalset(eval_set)

    assert list(data) == ["eval_set_id", "name", "description", "eval_cases", "creation_timestamp"]
    case = data["eval_cases"][1]
    assert set(case) == {"eval_id", "conversation", "session_input", "rubrics"}
    assert case["session_input"] == {
        "app_name": "thermostat_agent",
        "user_id": "eval_user",
        "state": {},
    }
    assert case["rubrics"] == [
        {
            "rubric_id": "states_new_setting",
            "rubric_content": {"text_property": "The reply states the new night-time temperature."},
            "type": "FINAL_RESPONSE_QUALITY",
        }
    ]
    turn = case["conversation"][0]
    assert turn == {
        "invocation_id": "inv-night-1",
        "user_content": {
            "role": "user",
            "parts": [{"text": "From 11pm, drop the whole house to 16 degrees every night."}],
        },
        "final_response": {
            "role": "model",
            "parts": [{"text": "Your night schedule now sets every room to 16°C from 23:00."}],
        },
        "intermediate_data": {
            "tool_uses": [
                {"name": "get_schedule", "args": {}},
                {
                    "name": "update_schedule",
                    "args": {"start": "23:00", "celsius": 16, "rooms": "all"},
                },
            ],
            "intermediate_responses": [
                ["schedule_agent", [{"text": "Reading the current weekly schedule first."}]]
            ],
        },
    }

    def no_nulls(value: Any) -> bool:
        if isinstance(value, dict):
            return all(v is not None and no_nulls(v) for v in value.values())
        if isinstance(value, list):
            return all(no_nulls(v) for v in value)
        return True

    for source in ADK_SOURCES:
        assert no_nulls(to_adk_evalset(load_evalset(FIXTURES / source).eval_set)), source


def test_invocation_events_are_written_as_tool_uses():
    eval_set = load_evalset(FIXTURES / "adk" / "card_support.evalset.json").eval_set
    turn = to_adk_evalset(eval_set)["eval_cases"][0]["conversation"][0]

    assert turn["intermediate_data"]["tool_uses"] == [
        {"name": "lookup_card", "args": {"last_four": "4421"}, "id": "adk-0c1e"},
        {"name": "freeze_card", "args": {"card_id": "card_77", "reason": "lost"}, "id": "adk-5d2a"},
    ]
    assert turn["user_content"]["parts"] == [
        {"text": "I lost my card ending in 4421. Please freeze it."}
    ]


def test_scenario_case_is_written_without_a_conversation():
    eval_set = load_evalset(FIXTURES / "adk" / "trip_scenarios.evalset.json").eval_set
    case = to_adk_evalset(eval_set)["eval_cases"][0]

    assert "conversation" not in case
    assert case["conversation_scenario"]["user_persona"] == "NOVICE"
    assert case["conversation_scenario"]["starting_prompt"].startswith("My 9:40 train")


def test_non_text_parts_keep_their_adk_shape(tmp_path: Path):
    data = {
        "eval_set_id": "parts",
        "eval_cases": [
            {
                "eval_id": "image",
                "conversation": [
                    {
                        "user_content": {
                            "role": "user",
                            "parts": [
                                {"text": "What is in this picture?"},
                                {"inline_data": {"mime_type": "image/png", "data": "iVBORw0KGgo="}},
                            ],
                        }
                    }
                ],
            }
        ],
    }
    source = tmp_path / "source"
    source.mkdir()
    (source / "parts.evalset.json").write_text(json.dumps(data))
    eval_set = load_evalset(source / "parts.evalset.json").eval_set
    written, again = _written_and_read(eval_set, tmp_path)

    parts = written["eval_cases"][0]["conversation"][0]["user_content"]["parts"]
    assert parts == data["eval_cases"][0]["conversation"][0]["user_content"]["parts"]
    assert again == eval_set
