"""Nothing a file gives is silently ignored: an expectation no criterion judges, and a
config key that is accepted but not used, are named in a warning before the run."""

from __future__ import annotations

import json
from pathlib import Path

from agentflow_eval.criteria.coverage import unjudged_warnings
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.run.plan import load_inputs

EVALSET = {
    "eval_set_id": "s",
    "eval_cases": [
        {
            "eval_id": "stateful",
            "conversation": [
                {
                    "user_content": "remember milk",
                    "intermediate_data": {
                        "tool_uses": [],
                        "intermediate_responses": [["agent", [{"text": "Saving it."}]]],
                    },
                    "final_response": "Saved.",
                    "rubrics": [{"id": "brief", "content": "Is brief."}],
                }
            ],
            "final_session_state": {"notes": ["milk"]},
        },
        {
            "eval_id": "expectations_only",
            "conversation": [{"user_content": "hi"}],
            "expectations": ["completes"],
        },
    ],
}


def _warned_fields(warnings: list[str]) -> list[str]:
    return sorted(w.split(" is given by")[0] for w in warnings)


def test_expectations_the_default_criteria_do_not_judge_are_named():
    warnings = unjudged_warnings(EvalSet.model_validate(EVALSET), EvalConfig.default())
    assert _warned_fields(warnings) == [
        "expected_intermediate_responses",
        "final_session_state",
        "rubrics",
    ]
    state = next(w for w in warnings if w.startswith("final_session_state"))
    assert state == (
        "final_session_state is given by 1 case(s) but no criterion judges it (add "
        "final_session_state_match to the config's criteria): 'stateful'"
    )


def test_a_config_that_judges_everything_gives_no_warning():
    config = EvalConfig.model_validate(
        {
            "criteria": {
                "tool_trajectory_avg_score": 1.0,
                "response_match_score": 0.8,
                "final_response_match_v2": {"include_intermediate_responses_in_final": True},
                "rubric_based_final_response_quality_v1": 0.8,
                "final_session_state_match": 1.0,
            }
        }
    )
    assert unjudged_warnings(EvalSet.model_validate(EVALSET), config) == []


def test_an_expected_answer_without_a_response_criterion_is_named():
    config = EvalConfig.model_validate({"criteria": {"tool_trajectory_avg_score": 1.0}})
    warnings = unjudged_warnings(EvalSet.model_validate(EVALSET), config)
    assert "expected_final_response" in _warned_fields(warnings)


def test_the_run_plan_shows_file_config_and_judging_warnings(tmp_path: Path):
    evalset = tmp_path / "x.evalset.json"
    evalset.write_text(json.dumps(EVALSET), encoding="utf-8")
    config = tmp_path / "cfg.json"
    config.write_text(
        json.dumps({"criteria": {"response_match_score": 0.8}, "evaluation_settings": {}}),
        encoding="utf-8",
    )
    text = "\n".join(load_inputs(evalset, config).warnings)
    assert f"{config}: unknown key 'evaluation_settings' is ignored" in text
    assert "final_session_state is given by 1 case(s)" in text
