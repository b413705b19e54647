"""The published JSON Schemas accept every file the loaders accept (native and ADK,
snake_case and camelCase, legacy lists, shorthands) and reject the broken ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.criteria.config_schema import config_json_schema, write_schemas
from agentflow_eval.files.adk import to_adk_evalset
from agentflow_eval.files.loading import load_evalset
from agentflow_eval.files.schemas import evalset_json_schema

FIXTURES = Path(__file__).parents[2] / "fixtures"

GOOD_EVALSETS = [
    "weather.evalset.json",
    "yaml/weather.evalset.yaml",
    "yaml/arithmetic.evalset.yml",
    "warnings/extra_keys.evalset.json",
    "adk/thermostat.evalset.json",
    "adk/card_support.evalset.json",
    "adk/trip_scenarios.evalset.json",
    "adk/legacy/unit_converter.test.json",
    "adk/legacy/recipes.evalset.json",
    "adk213/written/dump_full.evalset.json",
    "adk213/written/dump_no_nulls.evalset.json",
    "adk213/written/dump_camel.evalset.json",
    "adk213/written/dump_camel_no_nulls.evalset.json",
    "adk213/written/migrated.evalset.json",
    "adk213/written/web_saved.evalset.json",
    "adk213/written/legacy_source.test.json",
]
GOOD_CONFIGS = [
    "eval_config.json",
    "yaml/eval_config.yaml",
    "adk/test_config.json",
    "adk/legacy/test_config.json",
    "adk213/written/config_full.json",
    "adk213/written/config_no_nulls.json",
    "adk213/written/config_camel.json",
    "adk213/written/config_spellings_in_order.json",
    "adk213/written/config_spellings_upper.json",
    "adk213/written/config_spellings_any_order_words.json",
    "adk213/written/config_spellings_int_any_order.json",
    "adk213/written/config_spellings_int_exact.json",
]
# broken files whose problem a schema can see (duplicate ids and the like it cannot)
BAD_EVALSETS = [
    "broken/weather.evalset.json",
    "broken/camel_typo.evalset.json",
    "broken/several_errors.evalset.json",
    "broken/bad_expectation.evalset.yaml",
    "broken/missing_query.test.json",
    "broken/missing_data.evalset.json",
    "broken/scalar.evalset.json",
    "broken/empty_list.test.json",
]
BAD_CONFIGS = [
    "broken/bad_match_type.json",
    "broken/bad_criteria.yaml",
    "broken/custom_metrics_config.json",
    "broken/list_config.json",
]


def _read(relative: str) -> Any:
    path = FIXTURES / relative
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


@pytest.fixture(scope="module")
def evalset_validator() -> Draft202012Validator:
    schema = evalset_json_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@pytest.fixture(scope="module")
def config_validator() -> Draft202012Validator:
    schema = config_json_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_schemas_carry_id_title_and_description():
    for schema, kind in ((evalset_json_schema(), "evalset"), (config_json_schema(), "config")):
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"] == f"urn:agentflow-eval:schema:{kind}"
        assert schema["title"].startswith("agentflow-eval")
        assert "ADK" in schema["description"]


@pytest.mark.parametrize("relative", GOOD_EVALSETS)
def test_every_loadable_eval_set_is_schema_valid(relative: str, evalset_validator):
    load_evalset(FIXTURES / relative)  # the loader accepts it ...
    errors = [e.message for e in evalset_validator.iter_errors(_read(relative))]
    assert errors == []  # ... and so does the schema


@pytest.mark.parametrize("relative", GOOD_CONFIGS)
def test_every_loadable_config_is_schema_valid(relative: str, config_validator):
    load_config(FIXTURES / relative)
    assert [e.message for e in config_validator.iter_errors(_read(relative))] == []


@pytest.mark.parametrize("relative", BAD_EVALSETS)
def test_broken_eval_sets_fail_the_schema(relative: str, evalset_validator):
    assert not evalset_validator.is_valid(_read(relative))


@pytest.mark.parametrize("relative", BAD_CONFIGS)
def test_broken_configs_fail_the_schema(relative: str, config_validator):
    assert not config_validator.is_valid(_read(relative))


@pytest.mark.parametrize("relative", GOOD_EVALSETS)
def test_files_written_for_adk_are_schema_valid(relative: str, evalset_validator):
    data = to_adk_evalset(load_evalset(FIXTURES / relative).eval_set)
    assert [e.message for e in evalset_validator.iter_errors(data)] == []


def test_both_key_styles_and_adk_names_are_described(evalset_validator):
    invocation = evalset_json_schema()["$defs"]["Invocation"]["properties"]
    for key in (
        "user_content",
        "userContent",
        "query",
        "expected_final_response",
        "final_response",
        "finalResponse",
        "reference",
        "intermediate_data",
        "intermediateData",
        "expected_tool_use",
    ):
        assert key in invocation, key
    tool_call = evalset_json_schema()["$defs"]["ToolCall"]["properties"]
    assert {"name", "tool_name", "toolName", "args", "tool_input", "toolInput"} <= set(tool_call)
    # a typo is still caught: objects do not take arbitrary keys
    typo = {
        "eval_set_id": "s",
        "eval_cases": [{"eval_id": "c", "conversation": [{"user_content": "hi", "refrence": "x"}]}],
    }
    assert not evalset_validator.is_valid(typo)
    typo["eval_cases"][0]["conversation"][0].pop("refrence")
    assert evalset_validator.is_valid(typo)


def test_a_required_field_is_satisfied_by_any_of_its_names(evalset_validator):
    for case in ({"eval_id": "c"}, {"evalId": "c"}):
        data = {"evalSetId": "s", "evalCases": [{**case, "conversation": [{"query": "hi"}]}]}
        assert evalset_validator.is_valid(data)
    assert not evalset_validator.is_valid(
        {"evalSetId": "s", "evalCases": [{"conversation": [{"query": "hi"}]}]}
    )


def test_config_accepts_lower_case_match_type_and_bare_thresholds(config_validator):
    assert config_validator.is_valid(
        {"criteria": {"tool_trajectory_avg_score": {"match_type": "in_order"}, "x": 0.5}}
    )
    assert not config_validator.is_valid({"criteria": {"response_match_score": 1.5}})


def test_write_schemas(tmp_path: Path):
    target = tmp_path / "schemas" / "v1"
    paths = write_schemas(target)

    assert paths == [target / "evalset.schema.json", target / "config.schema.json"]
    assert json.loads(paths[0].read_text(encoding="utf-8")) == evalset_json_schema()
    assert json.loads(paths[1].read_text(encoding="utf-8")) == config_json_schema()
    assert paths[0].read_text(encoding="utf-8").endswith("}\n")


def test_adk_2_13_fields_and_the_short_rubric_form_are_in_the_schemas(
    evalset_validator, config_validator
):
    invocation = {
        "user_content": "hi",
        "model_duration": 1.5,
        "tool_duration": 0.5,
        "intermediate_data": {"tool_uses": [], "tool_responses": [{"name": "x", "response": {}}]},
    }
    case = {"eval_id": "c", "conversation": [invocation], "rubrics": [{"id": "a", "content": "b"}]}
    assert evalset_validator.is_valid({"eval_set_id": "s", "eval_cases": [case]})
    invocation["intermediate_data"]["tool_use"] = []  # ADK refuses this key; so do we
    assert not evalset_validator.is_valid({"eval_set_id": "s", "eval_cases": [case]})
    criteria = {
        "tool_trajectory_avg_score": {"match_type": "in-order", "ignore_args": True},
        "final_session_state_match": {"state_match": "SUBSET"},
        "final_response_match_v2": {
            "include_intermediate_responses_in_final": True,
            "judge_model_options": {"judge_model": "m", "num_samples": 3, "parallelism_limit": 2},
        },
    }
    assert config_validator.is_valid({"criteria": criteria, "evaluation_settings": {}})
    assert not config_validator.is_valid({"criteria": {"t": {"match_type": "sideways"}}})
