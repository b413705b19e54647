"""ADK 2.13's eval-set and config fields as they mean something here: ``ignore_args``,
``match_type`` spellings, ``judge_model_options``, the rubric short form ``{id,
content}`` and ``type``, and intermediate data that ADK would refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.criteria.registry import build_criterion
from agentflow_eval.criteria.trajectory import TrajectoryOptions
from agentflow_eval.files.loading import EvalFileError, load_evalset
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import Rubric


def _config(tmp_path: Path, data: dict) -> EvalConfig:
    path = tmp_path / "test_config.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return load_config(path)


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        (0, "EXACT"),
        (1, "IN_ORDER"),
        (2, "ANY_ORDER"),
        ("in-order", "IN_ORDER"),
        ("IN_ORDER", "IN_ORDER"),
        ("any order", "ANY_ORDER"),
        (" exact ", "EXACT"),
    ],
)
def test_match_type_reads_as_adk_reads_it(spelling, expected):
    assert TrajectoryOptions.model_validate({"match_type": spelling}).match_type == expected


def test_an_unknown_match_type_is_refused_with_the_criterion_named(tmp_path: Path):
    with pytest.raises(EvalFileError, match=r"criteria\.tool_trajectory_avg_score\.match_type"):
        _config(tmp_path, {"criteria": {"tool_trajectory_avg_score": {"match_type": 7}}})


async def test_ignore_args_compares_tool_names_only(tmp_path: Path):
    config = _config(
        tmp_path,
        {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "ignoreArgs": True}}},
    )
    criterion = build_criterion(
        "tool_trajectory_avg_score", config.criteria["tool_trajectory_avg_score"], config
    )
    assert criterion.matcher.args_match == "ignore"
    assert criterion.label == "trajectory EXACT, args ignore"


def test_ignore_args_contradicting_args_match_is_refused(tmp_path: Path):
    with pytest.raises(EvalFileError, match="ignore_args: true contradicts args_match"):
        _config(
            tmp_path,
            {
                "criteria": {
                    "tool_trajectory_avg_score": {"ignore_args": True, "args_match": "subset"}
                }
            },
        )


def test_judge_model_options_fill_the_judge_settings_and_explicit_ones_win(tmp_path: Path):
    config = _config(
        tmp_path,
        {
            "criteria": {
                "final_response_match_v2": {
                    "threshold": 0.6,
                    "judge_model_options": {
                        "judge_model": "openai/gpt-4o",
                        "num_samples": 3,
                        "judge_model_config": {
                            "temperature": 0.2,
                            "max_output_tokens": 256,
                            "seed": 7,
                            "top_p": 0.5,
                        },
                    },
                },
                "safety_v1": {"judge_model": "mine", "judgeModelOptions": {"judgeModel": "theirs"}},
            }
        },
    )
    match = config.criteria["final_response_match_v2"]
    assert (match.judge_model, match.num_samples) == ("openai/gpt-4o", 3)
    assert (match.temperature, match.max_tokens, match.seed) == (0.2, 256, 7)
    assert config.criteria["safety_v1"].judge_model == "mine"
    assert any("judge_model_config: top_p not used" in w for w in config.load_warnings)


def test_a_misspelt_top_level_key_is_still_an_error(tmp_path: Path):
    with pytest.raises(EvalFileError, match="did you mean 'criteria'"):
        _config(tmp_path, {"critera": {}})


def test_simulator_options_adk_writes(tmp_path: Path):
    config = _config(
        tmp_path,
        {
            "user_simulator_config": {
                "type": "llm_audio",
                "model": "openai/gpt-4o-mini",
                "model_configuration": {"temperature": 0.3, "top_k": 4},
                "custom_instructions": "Be terse.",
                "include_function_calls": True,
            }
        },
    )
    simulator = config.user_simulator_config
    assert simulator is not None and (simulator.model_extra or {})["temperature"] == 0.3
    text = "\n".join(config.load_warnings)
    for name in ("llm_audio", "custom_instructions", "include_function_calls", "top_k"):
        assert name in text


@pytest.mark.parametrize(
    "written",
    [
        {"id": "polite", "content": "The agent is polite."},
        {"rubric_id": "polite", "rubric_content": {"text_property": "The agent is polite."}},
        {"rubricId": "polite", "rubricContent": {"textProperty": "The agent is polite."}},
        {"rubric_id": "polite", "rubric_content": "The agent is polite."},
    ],
)
def test_rubrics_in_every_written_form(written):
    rubric = Rubric.model_validate(written)
    assert (rubric.rubric_id, rubric.rubric_content) == ("polite", "The agent is polite.")


def test_a_rubric_with_an_unknown_key_is_refused():
    with pytest.raises(ValueError, match="weight\n  Extra inputs are not permitted"):
        Rubric.model_validate({"id": "x", "content": "y", "weight": 2})


def _evalset(tmp_path: Path, invocation: dict) -> Path:
    path = tmp_path / "x.evalset.json"
    data = {"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [invocation]}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_intermediate_data_keys_adk_would_refuse_are_refused(tmp_path: Path):
    path = _evalset(tmp_path, {"query": "hi", "intermediate_data": {"tool_use": []}})
    with pytest.raises(EvalFileError) as caught:
        load_evalset(path)
    assert caught.value.case_id == "c"
    assert "unknown key 'tool_use'" in str(caught.value)
    mixed = {"query": "hi", "intermediate_data": {"tool_uses": [], "invocation_events": []}}
    with pytest.raises(EvalFileError, match="either invocation_events or tool_uses"):
        load_evalset(_evalset(tmp_path, mixed))


def test_an_error_in_tool_responses_points_at_the_key_as_written(tmp_path: Path):
    bad = {"query": "hi", "intermediate_data": {"tool_uses": [], "tool_responses": [5]}}
    with pytest.raises(EvalFileError) as caught:
        load_evalset(_evalset(tmp_path, bad))
    assert caught.value.field == "conversation[0].intermediate_data.tool_responses[0]"
