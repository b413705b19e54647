"""Native eval sets and configs (with case expectations), in JSON and YAML."""

from __future__ import annotations

import json
from pathlib import Path

from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.files.loading import LoadedEvalSet, load_evalset
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import CallsTool, Completes, FinalContains

FIXTURES = Path(__file__).parents[2] / "fixtures"


def test_seed_eval_set_loads_with_every_field():
    loaded = load_evalset(FIXTURES / "weather.evalset.json")

    assert isinstance(loaded, LoadedEvalSet)
    assert loaded.path == FIXTURES / "weather.evalset.json"
    assert loaded.warnings == []
    eval_set = loaded.eval_set
    assert eval_set.eval_set_id == "weather_agent_basic_tests"
    assert eval_set.name == "Weather Agent Basic Tests"
    assert eval_set.description == "Basic functionality tests for the weather agent"
    assert [c.eval_id for c in eval_set.eval_cases] == [
        "weather_lookup_simple",
        "weather_lookup_multi_city",
    ]
    simple = eval_set.case("weather_lookup_simple")
    (turn,) = simple.conversation
    assert turn.invocation_id == "inv_001"
    assert turn.user_content.role == "user"
    assert turn.user_content.text == "What's the weather in New York?"
    assert [(t.name, t.args) for t in turn.expected_tool_trajectory] == [
        ("get_weather", {"location": "New York"})
    ]
    assert turn.expected_final_response is not None
    assert turn.expected_final_response.role == "assistant"
    assert turn.expected_final_response.text == (
        "The weather in New York is currently sunny with a temperature of 72°F."
    )
    assert simple.session_input is not None
    assert (simple.session_input.app_name, simple.session_input.user_id) == (
        "weather_agent",
        "test_user",
    )
    multi = eval_set.case("weather_lookup_multi_city").conversation[0]
    assert [t.args["location"] for t in multi.expected_tool_trajectory] == ["Tokyo", "London"]
    assert loaded.case_sources == {
        "weather_lookup_simple": FIXTURES / "weather.evalset.json",
        "weather_lookup_multi_city": FIXTURES / "weather.evalset.json",
    }


def test_yaml_eval_set_equals_the_json_one():
    from_yaml = load_evalset(FIXTURES / "yaml" / "weather.evalset.yaml").eval_set
    from_json = load_evalset(FIXTURES / "weather.evalset.json").eval_set
    assert from_yaml == from_json


def test_yml_extension_and_expectation_shorthands():
    eval_set = load_evalset(FIXTURES / "yaml" / "arithmetic.evalset.yml").eval_set

    assert eval_set.case("say-hi").expectations == [Completes()]
    assert eval_set.case("append-note").expectations == [CallsTool(name="session_note_append")]
    add = eval_set.case("add-numbers")
    assert add.expectations == [FinalContains(text="7"), CallsTool(name="add")]
    assert add.conversation[0].user_content.text.startswith("What is 3 plus 4?")
    assert add.context == "The calculator tool is called add."
    assert add.metadata == {"owner": "evals", "tags": ["math"]}


def test_seed_config_loads_with_every_value():
    config = load_config(FIXTURES / "eval_config.json")

    assert isinstance(config, EvalConfig)
    trajectory = config.criteria["tool_trajectory_avg_score"]
    assert (trajectory.threshold, trajectory.match_type) == (1.0, "IN_ORDER")
    assert config.criteria["response_match_score"].threshold == 0.7
    judge = config.criteria["final_response_match_v2"]
    assert (judge.threshold, judge.judge_model, judge.num_samples) == (0.8, "gpt-4o-mini", 3)
    assert config.user_simulator_config is not None
    assert config.user_simulator_config.model == "gpt-4o"
    assert config.user_simulator_config.max_allowed_invocations == 10


def test_yaml_config_equals_the_json_one():
    assert load_config(FIXTURES / "yaml" / "eval_config.yaml") == load_config(
        FIXTURES / "eval_config.json"
    )


def test_a_schema_pointer_is_accepted_in_a_config(tmp_path: Path):
    path = tmp_path / "eval_config.json"
    path.write_text(
        json.dumps({"$schema": "./config.schema.json", "criteria": {"response_match_score": 0.6}})
    )
    assert load_config(path).criteria["response_match_score"].threshold == 0.6


def test_string_paths_are_accepted():
    assert load_evalset(str(FIXTURES / "weather.evalset.json")).path == (
        FIXTURES / "weather.evalset.json"
    )
    assert load_config(str(FIXTURES / "eval_config.json")).criteria
