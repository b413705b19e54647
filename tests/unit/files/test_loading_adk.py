"""Google ADK files read unchanged: camelCase and snake_case eval sets, invocation
events, conversation scenarios, legacy test files, test_config.json and its discovery,
and directories of eval files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentflow_eval.criteria.config_files import load_config, resolve_config
from agentflow_eval.files.loading import EvalFileError, find_config_for, load_evalset
from agentflow_eval.models.config import EvalConfig

FIXTURES = Path(__file__).parents[2] / "fixtures"
ADK = FIXTURES / "adk"


def _only_unjudged_tool_responses(warnings: list[str]) -> bool:
    """ADK records what the tools returned; the loader says no criterion judges it."""
    return all("recorded tool responses" in w and "not judged" in w for w in warnings)


def test_camel_case_evalset_with_parts_final_response_and_tool_uses():
    loaded = load_evalset(ADK / "thermostat.evalset.json")
    eval_set = loaded.eval_set

    assert _only_unjudged_tool_responses(loaded.warnings)
    assert eval_set.eval_set_id == "thermostat_regression"
    assert eval_set.creation_timestamp == 1767225600.25
    simple = eval_set.case("set_bedroom_temperature")
    (turn,) = simple.conversation
    assert turn.invocation_id == "inv-set-1"
    assert turn.user_content.text == "Set the bedroom to 19 degrees, please."
    assert turn.expected_final_response is not None
    assert turn.expected_final_response.role == "model"
    assert turn.expected_final_response.text == "Done: the bedroom thermostat is now set to 19°C."
    (call,) = turn.expected_tool_trajectory
    assert (call.id, call.name, call.args) == (
        "call-set-1",
        "set_temperature",
        {"room": "bedroom", "celsius": 19},
    )
    assert simple.session_input is not None
    assert simple.session_input.app_name == "thermostat_agent"
    assert simple.session_input.state == {"units": "celsius", "rooms": ["bedroom", "kitchen"]}

    night = eval_set.case("night_schedule_then_check")
    first, second = night.conversation
    assert [c.name for c in first.expected_tool_trajectory] == ["get_schedule", "update_schedule"]
    (progress,) = first.expected_intermediate_responses
    assert (progress.role, progress.text) == (
        "schedule_agent",
        "Reading the current weekly schedule first.",
    )
    assert second.expected_tool_trajectory[0].args == {"time": "07:00"}
    (rubric,) = night.rubrics
    assert rubric.rubric_id == "states_new_setting"
    assert rubric.rubric_content == "The reply states the new night-time temperature."


def test_snake_case_adk_dump_with_nulls_and_invocation_events():
    loaded = load_evalset(ADK / "card_support.evalset.json")
    eval_set = loaded.eval_set

    assert _only_unjudged_tool_responses(loaded.warnings)
    assert eval_set.description == ""  # ADK writes "description": null
    case = eval_set.case("freeze_lost_card")
    assert case.conversation_scenario is None
    assert case.final_session_state == {}
    (turn,) = case.conversation
    assert turn.user_content.text == "I lost my card ending in 4421. Please freeze it."
    assert [(c.id, c.name, c.args) for c in turn.expected_tool_trajectory] == [
        ("adk-0c1e", "lookup_card", {"last_four": "4421"}),
        ("adk-5d2a", "freeze_card", {"card_id": "card_77", "reason": "lost"}),
    ]
    assert [m.text for m in turn.expected_intermediate_responses] == [
        "I found the card and am freezing it now."
    ]
    assert case.session_input is not None
    assert case.session_input.state == {"customer_tier": "gold"}


def test_conversation_scenarios_snake_and_camel():
    eval_set = load_evalset(ADK / "trip_scenarios.evalset.json").eval_set

    train = eval_set.case("rebook_cancelled_train")
    assert train.conversation == []
    assert train.conversation_scenario is not None
    assert train.conversation_scenario.starting_prompt.startswith("My 9:40 train to Lyon")
    assert "window" in train.conversation_scenario.conversation_plan
    assert train.conversation_scenario.user_persona == "NOVICE"
    weekend = eval_set.case("budget_weekend").conversation_scenario
    assert weekend is not None
    assert weekend.starting_prompt == "I have 300 euros for a weekend somewhere warm in March."
    scripted = eval_set.case("greeting_scripted")
    assert scripted.conversation_scenario is None
    assert scripted.conversation[0].user_content.text == "Hi! What can you book for me?"


def test_legacy_test_file_is_one_multi_turn_case_named_after_the_file():
    loaded = load_evalset(ADK / "legacy" / "unit_converter.test.json")
    eval_set = loaded.eval_set

    assert eval_set.eval_set_id == "unit_converter"
    (case,) = eval_set.eval_cases
    assert case.eval_id == "unit_converter"
    assert case.session_input is None
    first, second = case.conversation
    assert [t.invocation_id for t in case.conversation] == ["unit_converter-1", "unit_converter-2"]
    assert first.user_content.text == "What can you do?"
    assert first.expected_tool_trajectory == []
    assert first.expected_final_response is not None
    assert first.expected_final_response.role == "model"
    assert first.expected_final_response.text == (
        "I convert between units of length, weight and temperature.\n"
    )
    assert [(c.name, c.args) for c in second.expected_tool_trajectory] == [
        ("convert_length", {"value": 26.2, "from_unit": "mi", "to_unit": "km"}),
        ("convert_temperature", {"value": 70, "from_unit": "F", "to_unit": "C"}),
    ]
    assert loaded.warnings == [
        f"{ADK / 'legacy' / 'unit_converter.test.json'}: legacy ADK test format (a list of "
        "turns), read as one 2-turn case 'unit_converter'"
    ]


def test_legacy_file_takes_an_initial_session():
    session = {"app_name": "converter", "user_id": "u9", "state": {"precision": 1}}
    loaded = load_evalset(ADK / "legacy" / "unit_converter.test.json", initial_session=session)

    session_input = loaded.eval_set.eval_cases[0].session_input
    assert session_input is not None
    assert (session_input.app_name, session_input.user_id, session_input.state) == (
        "converter",
        "u9",
        {"precision": 1},
    )


def test_initial_session_is_not_applied_to_eval_set_files_and_says_so():
    path = ADK / "thermostat.evalset.json"
    loaded = load_evalset(path, initial_session={"app_name": "other", "user_id": "x"})

    case = loaded.eval_set.case("set_bedroom_temperature")
    assert case.session_input is not None and case.session_input.app_name == "thermostat_agent"
    assert loaded.warnings[0] == (
        f"{path}: initial_session is used only for legacy test files; this file's cases take "
        "their session from their own session_input"
    )
    assert _only_unjudged_tool_responses(loaded.warnings[1:])


def test_legacy_list_of_cases_gives_one_case_per_entry():
    eval_set = load_evalset(ADK / "legacy" / "recipes.evalset.json").eval_set

    assert [c.eval_id for c in eval_set.eval_cases] == ["scale_pancakes", "substitute_butter"]
    pancakes = eval_set.case("scale_pancakes")
    assert pancakes.session_input is not None
    assert pancakes.session_input.state == {"units": "metric"}
    (turn,) = pancakes.conversation
    assert [c.args for c in turn.expected_tool_trajectory] == [
        {"name": "pancakes"},
        {"factor": 2.5},
    ]
    assert [(m.role, m.text) for m in turn.expected_intermediate_responses] == [
        ("pantry_agent", "Looking up the pancake recipe.")
    ]
    butter = eval_set.case("substitute_butter")
    assert butter.session_input is None  # an empty initial_session, as ADK treats it
    assert butter.conversation[0].expected_final_response is None  # no reference given


def test_adk_config_with_bare_floats_and_judge_model_options():
    config = load_config(ADK / "legacy" / "test_config.json")

    assert config.criteria["tool_trajectory_avg_score"].threshold == 1.0
    assert config.criteria["tool_trajectory_avg_score"].match_type == "EXACT"
    assert config.criteria["response_match_score"].threshold == 0.8
    judge = config.criteria["final_response_match_v2"]
    assert (judge.threshold, judge.judge_model, judge.num_samples, judge.temperature) == (
        0.6,
        "gemini-2.5-flash",
        3,
        0.2,
    )


def test_adk_config_with_rubrics_simulator_and_stop_signal():
    config = load_config(ADK / "test_config.json")

    assert config.criteria["tool_trajectory_avg_score"].match_type == "IN_ORDER"
    assert config.criteria["response_match_score"].threshold == 0.7
    rubric_judge = config.criteria["rubric_based_final_response_quality_v1"]
    assert rubric_judge.judge_model == "gemini-2.5-flash"
    assert [(r.rubric_id, r.rubric_content) for r in rubric_judge.rubrics] == [
        ("concise", "The reply is at most three sentences long.")
    ]
    assert config.criteria["hallucinations_v1"].evaluate_intermediate_nl_responses is True
    simulator_quality = config.criteria["per_turn_user_simulator_quality_v1"]
    assert simulator_quality.stop_signal == "</finished>"  # the criterion reads it
    assert config.user_simulator_config is not None
    assert config.user_simulator_config.model == "gemini-2.5-flash"
    assert config.user_simulator_config.max_allowed_invocations == 12


def test_adk_custom_metrics_are_refused_with_a_pointer_to_function():
    with pytest.raises(EvalFileError) as caught:
        load_config(FIXTURES / "broken" / "custom_metrics_config.json")
    assert caught.value.field == "custom_metrics"
    assert '"function": "package.module:attr"' in caught.value.message
    assert "(found: tone_check)" in caught.value.message


def test_find_config_for_uses_the_test_config_next_to_the_file():
    assert find_config_for(ADK / "legacy" / "unit_converter.test.json") == (
        ADK / "legacy" / "test_config.json"
    )
    assert find_config_for(ADK / "legacy") == ADK / "legacy" / "test_config.json"
    assert find_config_for(FIXTURES / "weather.evalset.json") is None


def test_resolve_config_prefers_explicit_then_adjacent_then_default():
    explicit = resolve_config(
        ADK / "legacy" / "unit_converter.test.json", FIXTURES / "eval_config.json"
    )
    assert explicit.criteria["response_match_score"].threshold == 0.7
    adjacent = resolve_config(ADK / "legacy" / "unit_converter.test.json")
    assert adjacent.criteria["final_response_match_v2"].judge_model == "gemini-2.5-flash"
    assert resolve_config(FIXTURES / "weather.evalset.json") == EvalConfig.default()


def test_directory_merges_every_eval_file_below_it():
    loaded = load_evalset(ADK)

    assert loaded.path == ADK
    assert loaded.eval_set.eval_set_id == "adk"
    assert loaded.eval_set.name == "adk"
    assert sorted(loaded.case_sources) == sorted(
        [
            "freeze_lost_card",
            "scale_pancakes",
            "substitute_butter",
            "unit_converter",
            "set_bedroom_temperature",
            "night_schedule_then_check",
            "rebook_cancelled_train",
            "budget_weekend",
            "greeting_scripted",
        ]
    )
    assert loaded.case_sources["unit_converter"] == ADK / "legacy" / "unit_converter.test.json"
    assert loaded.case_sources["freeze_lost_card"] == ADK / "card_support.evalset.json"
    # each file's own warnings are kept
    assert any("legacy ADK test format" in w for w in loaded.warnings)


def test_directory_prefixes_colliding_case_ids_with_the_file(tmp_path: Path):
    (tmp_path / "checkout").mkdir()
    shutil.copy(FIXTURES / "weather.evalset.json", tmp_path / "weather.evalset.json")
    shutil.copy(FIXTURES / "weather.evalset.json", tmp_path / "checkout" / "forecast.evalset.json")
    other = {
        "eval_set_id": "other",
        "eval_cases": [{"eval_id": "unique_case", "conversation": [{"user_content": "Hi"}]}],
    }
    (tmp_path / "other.evalset.json").write_text(json.dumps(other))
    (tmp_path / "notes.json").write_text("{}")  # not an eval file: not read

    loaded = load_evalset(tmp_path)

    assert [c.eval_id for c in loaded.eval_set.eval_cases] == [
        "checkout/forecast/weather_lookup_simple",
        "checkout/forecast/weather_lookup_multi_city",
        "unique_case",
        "weather/weather_lookup_simple",
        "weather/weather_lookup_multi_city",
    ]
    assert loaded.eval_set.eval_set_id == tmp_path.name
    assert loaded.case_sources["weather/weather_lookup_simple"] == tmp_path / "weather.evalset.json"
    assert loaded.warnings == [
        f"{tmp_path}: case id 'weather_lookup_simple' is used by 2 files; renamed to "
        "'checkout/forecast/weather_lookup_simple', 'weather/weather_lookup_simple'",
        f"{tmp_path}: case id 'weather_lookup_multi_city' is used by 2 files; renamed to "
        "'checkout/forecast/weather_lookup_multi_city', 'weather/weather_lookup_multi_city'",
    ]


def test_directory_without_eval_files_is_an_error(tmp_path: Path):
    (tmp_path / "README.md").write_text("nothing here")
    with pytest.raises(EvalFileError) as caught:
        load_evalset(tmp_path)
    assert caught.value.path == tmp_path
    assert "no eval files in this directory" in str(caught.value)


def test_directory_reports_the_broken_file(tmp_path: Path):
    shutil.copy(FIXTURES / "weather.evalset.json", tmp_path / "a.evalset.json")
    shutil.copy(FIXTURES / "broken" / "weather.evalset.json", tmp_path / "b.evalset.json")
    with pytest.raises(EvalFileError) as caught:
        load_evalset(tmp_path)
    assert caught.value.path == tmp_path / "b.evalset.json"
    assert caught.value.case_id == "weather_lookup_simple"


def test_directory_refuses_a_prefixed_id_that_another_file_already_uses(tmp_path: Path):
    shutil.copy(FIXTURES / "weather.evalset.json", tmp_path / "a.evalset.json")
    shutil.copy(FIXTURES / "weather.evalset.json", tmp_path / "b.evalset.json")
    taken = {
        "eval_set_id": "c",
        "eval_cases": [
            {"eval_id": "a/weather_lookup_simple", "conversation": [{"user_content": "Hi"}]}
        ],
    }
    (tmp_path / "c.evalset.json").write_text(json.dumps(taken))
    with pytest.raises(EvalFileError) as caught:
        load_evalset(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / 'c.evalset.json'}: case 'a/weather_lookup_simple': eval_id: eval_id "
        f"'a/weather_lookup_simple' is also used by {tmp_path / 'a.evalset.json'}; "
        "rename one of them"
    )
