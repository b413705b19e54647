"""``docs/adk-fields.md`` documents every field Google ADK 2.13 defines for eval-set and
config files, and says true things about each.

``tests/fixtures/adk213/fields.json`` lists the fields as ADK 2.13's own pydantic models
define them (written by ADK; nothing here needs ADK installed). For each one the doc's
table gives a status; these tests check that

- every field has a row in its model's table, under its camelCase alias too;
- a file carrying a field the doc calls accepted (anything but "refused") loads, under
  its snake_case name and under its camelCase alias, and one carrying a "refused" field
  fails with an error naming it;
- a "not used, warns" field is named in a load warning, and a "not used, silent" field
  in none.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic.alias_generators import to_camel

from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.criteria.registry import known_criteria
from agentflow_eval.files.loading import EvalFileError, load_evalset

ROOT = Path(__file__).parents[3]
FIELDS = json.loads((ROOT / "tests/fixtures/adk213/fields.json").read_text("utf-8"))
DOC = (ROOT / "docs/adk-fields.md").read_text("utf-8")
STATUSES = ("used", "converted", "not used, warns", "not used, silent", "refused")


def _doc_tables() -> dict[str, dict[str, tuple[str, str]]]:
    """Model heading → field → (camelCase column, status column)."""
    tables: dict[str, dict[str, tuple[str, str]]] = {}
    current: dict[str, tuple[str, str]] | None = None
    for line in DOC.splitlines():
        if line.startswith("### "):
            current = tables.setdefault(line[4:].strip(), {})
        elif line.startswith("## "):
            current = None
        elif current is not None and line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            current[cells[0].strip("`")] = (cells[1].strip("`"), cells[2])
    return tables


TABLES = _doc_tables()
ROWS = [
    (model, entry["name"], entry["alias"])
    for model, spec in FIELDS["models"].items()
    for entry in spec["fields"]
]


def _status(model: str, name: str) -> str:
    return TABLES[model][name][1]


def test_the_field_list_was_written_by_adk_2_13():
    assert FIELDS["computed_with"]["google-adk"].startswith("2.13.")
    assert len(ROWS) > 100  # every model an eval-set or config file holds


# ------------------------------------------------------------------- (a) every field


@pytest.mark.parametrize("model", sorted(FIELDS["models"]))
def test_every_adk_field_has_a_row_in_its_models_table(model: str):
    assert model in TABLES, f"docs/adk-fields.md has no '### {model}' table"
    adk = {entry["name"]: entry["alias"] for entry in FIELDS["models"][model]["fields"]}
    documented = TABLES[model]
    assert sorted(documented) == sorted(adk), f"{model}: rows differ from ADK's fields"
    for name, alias in adk.items():
        camel, status = documented[name]
        assert camel == alias, f"{model}.{name}: camelCase column says {camel!r}, ADK {alias!r}"
        assert status in STATUSES, f"{model}.{name}: unknown status {status!r}"


def test_no_table_describes_a_model_adk_does_not_define():
    assert sorted(TABLES) == sorted(FIELDS["models"])


# ----------------------------------------------------------- building a file with a field

_TEXT = {"role": "user", "parts": [{"text": "Weather in Paris?"}]}
_PERSONA = {"id": "NOVICE", "description": "New to this.", "behaviors": []}
_BEHAVIOR = {
    "name": "brief",
    "description": "Writes short messages.",
    "behavior_instructions": ["Write one sentence."],
    "violation_rubrics": ["The user writes more than one sentence."],
}
_RUBRIC = {"rubric_id": "polite", "rubric_content": {"text_property": "The answer is polite."}}

SAMPLES: dict[str, dict[str, Any]] = {
    "EvalSet": {
        "eval_set_id": "s",
        "name": "Set",
        "description": "About it.",
        "eval_cases": [{"eval_id": "c", "conversation": [{"user_content": _TEXT}]}],
        "creation_timestamp": 1.5,
    },
    "EvalCase": {
        "eval_id": "c",
        "conversation": [{"user_content": _TEXT}],
        "conversation_scenario": {"starting_prompt": "Hi", "conversation_plan": "Ask."},
        "session_input": {"app_name": "a", "user_id": "u", "state": {"k": 1}},
        "creation_timestamp": 1.5,
        "rubrics": [_RUBRIC],
        "final_session_state": {"k": 2},
    },
    "Invocation": {
        "invocation_id": "t1",
        "user_content": _TEXT,
        "final_response": {"role": "model", "parts": [{"text": "Sunny."}]},
        "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]},
        "creation_timestamp": 1.5,
        "duration": 2.0,
        "model_duration": 1.5,
        "tool_duration": 0.25,
        "rubrics": [_RUBRIC],
        "app_details": {"agent_details": {"root": {"name": "root", "instructions": "Help."}}},
    },
    "IntermediateData": {
        "tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}],
        "tool_responses": [{"name": "get_weather", "response": {"sky": "sunny"}}],
        "intermediate_responses": [["root", [{"text": "Looking it up."}]]],
    },
    "InvocationEvents": {
        "invocation_events": [
            {"author": "root", "content": {"parts": [{"function_call": {"name": "t"}}]}}
        ]
    },
    "InvocationEvent": {
        "author": "root",
        "content": {"role": "model", "parts": [{"text": "Looking it up."}]},
        "grounding_metadata": {"web_search_queries": ["paris weather"]},
        "usage_metadata": {"prompt_token_count": 10, "total_token_count": 12},
        "model_version": "gemini-2.5-flash",
    },
    "SessionInput": {"app_name": "a", "user_id": "u", "session_id": "fixed", "state": {"k": 1}},
    "ConversationScenario": {
        "starting_prompt": "Hi",
        "conversation_plan": "Ask for the weather.",
        "user_persona": _PERSONA,
    },
    "UserPersona": {**_PERSONA, "behaviors": [_BEHAVIOR]},
    "UserBehavior": _BEHAVIOR,
    "Rubric": {**_RUBRIC, "description": "For people.", "type": "FINAL_RESPONSE_QUALITY"},
    "RubricContent": {"text_property": "The answer is polite."},
    "AppDetails": {"agent_details": {"root": {"name": "root"}}},
    "AgentDetails": {"name": "root", "instructions": "Help.", "tool_declarations": [{}]},
    "Content (google.genai)": {"parts": [{"text": "Sunny."}], "role": "model"},
    "FunctionCall (google.genai)": {
        "id": "call-1",
        "args": {"city": "Paris"},
        "name": "get_weather",
        "partial_args": [{"json_path": "$.city", "string_value": "Par"}],
        "will_continue": True,
    },
    "EvalConfig": {
        "criteria": {"response_match_score": 0.8},
        "custom_metrics": {"mine": {"code_config": {"name": "pkg.mod.fn"}}},
        "user_simulator_config": {"model": "gpt-4o-mini"},
        "live_model_config": {"timeout_seconds": 30},
    },
    "CustomMetricConfig": {
        "code_config": {"name": "pkg.mod.fn"},
        "metric_info": {"metric_name": "mine"},
        "description": "Mine.",
    },
    "LiveModelConfig": {"timeout_seconds": 30},
    "JudgeModelOptions": {
        "judge_model": "gpt-4o",
        "judge_model_config": {"temperature": 0.1},
        "num_samples": 3,
        "parallelism_limit": 4,
    },
    "LlmBackedUserSimulatorConfig": {
        "type": "llm_backed",
        "model": "gpt-4o-mini",
        "model_configuration": {"temperature": 0.3},
        "max_allowed_invocations": 4,
        "custom_instructions": "{{ stop_signal }} {{ conversation_plan }} "
        "{{ conversation_history }}",
        "include_function_calls": True,
    },
}
SAMPLES["LlmAudioUserSimulatorConfig"] = {
    **SAMPLES["LlmBackedUserSimulatorConfig"],
    "type": "llm_audio",
    "audio_model": "cloud_tts",
    "audio_model_configuration": {"speech_config": {"language_code": "en-US"}},
    "include_text_with_audio": False,
}
_CRITERION_VALUES = {
    "threshold": 0.5,
    "include_intermediate_responses_in_final": True,
    "match_type": 1,
    "ignore_args": True,
    "judge_model_options": {"judge_model": "gpt-4o", "num_samples": 1},
    "rubrics": [_RUBRIC],
    "evaluate_intermediate_nl_responses": True,
    "stop_signal": "DONE",
}
CRITERION_OF = {
    "BaseCriterion": "response_match_score",
    "ToolTrajectoryCriterion": "tool_trajectory_avg_score",
    "LlmAsAJudgeCriterion": "final_response_match_v2",
    "RubricsBasedCriterion": "rubric_based_final_response_quality_v1",
    "HallucinationsCriterion": "hallucinations_v1",
    "LlmBackedUserSimulatorCriterion": "per_turn_user_simulator_quality_v1",
}

WARNED_AS = {
    ("AppDetails", "agent_details"): "app_details",
    ("AgentDetails", "name"): "app_details",
    ("AgentDetails", "instructions"): "app_details",
    ("AgentDetails", "tool_declarations"): "app_details",
    ("LiveModelConfig", "timeout_seconds"): "live_model_config",
}
"""Fields warned about under the name of the object that holds them."""

REFUSED_AS = {
    ("CustomMetricConfig", name): "custom_metrics" for name in SAMPLES["CustomMetricConfig"]
}


def _value(model: str, name: str) -> Any:
    if model in CRITERION_OF:
        return _CRITERION_VALUES[name]
    return copy.deepcopy(SAMPLES[model][name])


def _with(base: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """``base`` with ``key`` set, in place of the same field under its other spelling."""
    kept = {k: v for k, v in base.items() if to_camel(k) != to_camel(key)}
    return {**kept, key: value}


def _evalset(invocation: dict[str, Any] | None = None, **case: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"eval_id": "c", **case}
    if "conversation_scenario" not in body and "conversationScenario" not in body:
        body.setdefault("conversation", [invocation or {"user_content": _TEXT}])
    return {"eval_set_id": "s", "eval_cases": [body]}


def _scenario(**persona: Any) -> dict[str, Any]:
    return _evalset(
        conversation_scenario={
            "starting_prompt": "Hi",
            "conversation_plan": "Ask.",
            "user_persona": {**_PERSONA, **persona},
        }
    )


# Each builder: (key as written, value) -> ("evalset" | "config", the file's data).
Builder = Callable[[str, Any], tuple[str, dict[str, Any]]]
BUILDERS: dict[str, Builder] = {
    "EvalSet": lambda k, v: ("evalset", _with(_evalset(), k, v)),
    "EvalCase": lambda k, v: ("evalset", _evalset(**{k: v})),
    "Invocation": lambda k, v: ("evalset", _evalset(_with({"user_content": _TEXT}, k, v))),
    "IntermediateData": lambda k, v: (
        "evalset",
        _evalset({"user_content": _TEXT, "intermediate_data": {k: v}}),
    ),
    "InvocationEvents": lambda k, v: (
        "evalset",
        _evalset({"user_content": _TEXT, "intermediate_data": {k: v}}),
    ),
    "InvocationEvent": lambda k, v: (
        "evalset",
        _evalset(
            {
                "user_content": _TEXT,
                "intermediate_data": {"invocation_events": [_with({"author": "root"}, k, v)]},
            }
        ),
    ),
    "SessionInput": lambda k, v: (
        "evalset",
        _evalset(session_input=_with({"app_name": "a", "user_id": "u"}, k, v)),
    ),
    "ConversationScenario": lambda k, v: (
        "evalset",
        _evalset(
            conversation_scenario=_with(
                {"starting_prompt": "Hi", "conversation_plan": "Ask."}, k, v
            )
        ),
    ),
    "UserPersona": lambda k, v: ("evalset", _scenario(**{k: v})),
    "UserBehavior": lambda k, v: ("evalset", _scenario(behaviors=[_with(_BEHAVIOR, k, v)])),
    "Rubric": lambda k, v: (
        "evalset",
        _evalset({"user_content": _TEXT, "rubrics": [_with(_RUBRIC, k, v)]}),
    ),
    "RubricContent": lambda k, v: (
        "evalset",
        _evalset(
            {"user_content": _TEXT, "rubrics": [{"rubric_id": "r", "rubric_content": {k: v}}]}
        ),
    ),
    "AppDetails": lambda k, v: (
        "evalset",
        _evalset({"user_content": _TEXT, "app_details": {k: v}}),
    ),
    "AgentDetails": lambda k, v: (
        "evalset",
        _evalset(
            {
                "user_content": _TEXT,
                "app_details": {"agent_details": {"root": _with({"name": "root"}, k, v)}},
            }
        ),
    ),
    "Content (google.genai)": lambda k, v: (
        "evalset",
        _evalset(
            {"user_content": _TEXT, "final_response": _with({"role": "model", "parts": []}, k, v)}
        ),
    ),
    "FunctionCall (google.genai)": lambda k, v: (
        "evalset",
        _evalset(
            {
                "user_content": _TEXT,
                "intermediate_data": {"tool_uses": [_with({"name": "t"}, k, v)]},
            }
        ),
    ),
    "EvalConfig": lambda k, v: ("config", _with({"criteria": {}}, k, v)),
    "CustomMetricConfig": lambda k, v: (
        "config",
        {
            "criteria": {"mine": 0.5},
            "custom_metrics": {"mine": _with({"code_config": {"name": "m.f"}}, k, v)},
        },
    ),
    "LiveModelConfig": lambda k, v: ("config", {"criteria": {}, "live_model_config": {k: v}}),
    "JudgeModelOptions": lambda k, v: (
        "config",
        {
            "criteria": {
                "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {k: v}}
            }
        },
    ),
    "LlmBackedUserSimulatorConfig": lambda k, v: (
        "config",
        {"user_simulator_config": _with({"type": "llm_backed"}, k, v)},
    ),
    "LlmAudioUserSimulatorConfig": lambda k, v: (
        "config",
        {"user_simulator_config": _with({"type": "llm_audio"}, k, v)},
    ),
}
for _model, _metric in CRITERION_OF.items():
    BUILDERS[_model] = lambda k, v, metric=_metric: (
        "config",
        {"criteria": {metric: _with({"threshold": 0.5}, k, v)}},
    )


def _load(tmp_path: Path, kind: str, data: dict[str, Any]) -> list[str]:
    """The warnings of loading ``data`` as an eval set or a config."""
    if kind == "evalset":
        path = tmp_path / "probe.evalset.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return load_evalset(path).warnings
    path = tmp_path / "test_config.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return load_config(path).load_warnings


def _names(name: str) -> re.Pattern[str]:
    return re.compile(rf"\b({re.escape(name)}|{re.escape(to_camel(name))})\b")


SPELLINGS = [
    pytest.param(model, name, key, id=f"{model.split()[0]}.{key}")
    for model, name, alias in ROWS
    for key in dict.fromkeys((name, alias))
]


def test_every_model_has_a_sample_and_a_builder():
    for model, name, _ in ROWS:
        assert model in BUILDERS, model
        _value(model, name)  # a KeyError names the field without a sample


# ------------------------------------------------- (b) accepted fields load, refused do not


@pytest.mark.parametrize(("model", "name", "key"), SPELLINGS)
def test_a_file_with_the_field_loads_as_the_doc_says(
    model: str, name: str, key: str, tmp_path: Path
):
    kind, data = BUILDERS[model](key, _value(model, name))
    if _status(model, name) == "refused":
        with pytest.raises(EvalFileError) as error:
            _load(tmp_path, kind, data)
        assert _names(REFUSED_AS.get((model, name), name)).search(str(error.value))
    else:
        _load(tmp_path, kind, data)


# ------------------------------------------------------- (c) which unused fields are named


UNUSED_SPELLINGS = [
    param for param in SPELLINGS if _status(*param.values[:2]).startswith("not used")
]


@pytest.mark.parametrize(("model", "name", "key"), UNUSED_SPELLINGS)
def test_an_unused_field_is_named_in_a_warning_exactly_when_the_doc_says(
    model: str, name: str, key: str, tmp_path: Path
):
    status = _status(model, name)
    kind, data = BUILDERS[model](key, _value(model, name))
    warnings = _load(tmp_path, kind, data)
    pattern = _names(WARNED_AS.get((model, name), name))
    named = [w for w in warnings if pattern.search(w)]
    if status == "not used, warns":
        assert named, f"no warning names {name}: {warnings}"
    else:
        assert not named, f"{name} is documented as silent but warned: {named}"


# --------------------------------------------------------------- what the doc says, counted


def test_the_statuses_add_up():
    counts = {status: 0 for status in STATUSES}
    for model, name, _ in ROWS:
        counts[_status(model, name)] += 1
    assert sum(counts.values()) == len(ROWS)
    # the only refusal is ADK's custom_metrics (code written against ADK's own API)
    refused = sorted(f"{m}.{n}" for m, n, _ in ROWS if _status(m, n) == "refused")
    assert refused == [
        "CustomMetricConfig.code_config",
        "CustomMetricConfig.description",
        "CustomMetricConfig.metric_info",
        "EvalConfig.custom_metrics",
    ]


# ------------------------------------------------------------ details of the rows above


def test_a_custom_criterion_gets_stop_signal_as_an_option_without_a_warning(tmp_path: Path):
    path = tmp_path / "test_config.json"
    criterion = {"threshold": 0.5, "function": "checks:ended", "stopSignal": "DONE"}
    path.write_text(json.dumps({"criteria": {"ended": criterion}}), encoding="utf-8")
    config = load_config(path)
    assert config.criteria["ended"].options == {"stop_signal": "DONE"}
    assert config.load_warnings == []


def test_streamed_call_fields_are_kept_when_the_set_is_written_back(tmp_path: Path):
    from agentflow_eval.files.adk import to_adk_evalset

    call = SAMPLES["FunctionCall (google.genai)"]
    data = _evalset({"user_content": _TEXT, "intermediate_data": {"tool_uses": [call]}})
    path = tmp_path / "calls.evalset.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    written = to_adk_evalset(load_evalset(path).eval_set)
    (invocation,) = written["eval_cases"][0]["conversation"]
    assert invocation["intermediate_data"]["tool_uses"] == [call]


def test_every_adk_metric_is_a_criterion_and_the_doc_lists_it_as_one() -> None:
    """ADK 2.13's own list of metrics (its ``PrebuiltMetrics``): each is a criterion here,
    and the doc's metrics section names each, the efficiency metrics among them."""
    metrics = pytest.importorskip("google.adk.evaluation.eval_metrics")
    names = [metric.value for metric in metrics.PrebuiltMetrics]
    assert "token_usage_v1" in names and "invocation_duration_v1" in names
    assert [name for name in names if name not in known_criteria()] == []
    section = DOC.split("## ADK's metrics", 1)[1].split("\n## ", 1)[0]
    assert [name for name in names if f"`{name}`" not in section] == []
    assert "not implemented" not in section.lower() and "not yet" not in section.lower()
