"""build_criteria with the built-in deterministic criteria: config entries, then the case's
own expectations."""

from __future__ import annotations

import pytest
from criteria_helpers import case, context, expect, invocation, made, trial, turn

from agentflow_eval.criteria.registry import UnknownCriterion, build_criteria, known_criteria
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import Invocation


def test_the_deterministic_criteria_are_registered():
    assert {
        "tool_trajectory_avg_score",
        "response_match_score",
        "completes",
        "calls_tool",
        "final_contains",
    } <= set(known_criteria())


async def test_config_criteria_then_case_expectations():
    config = EvalConfig.model_validate(
        {
            "criteria": {
                "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "in_order"},
                "response_match_score": 0.7,  # ADK's bare-float form
            }
        }
    )
    weather = case(
        invocation(
            [expect("get_weather", location="New York")],
            final="The weather in New York is sunny at 72 degrees",
        ),
        expectations=["completes", {"calls_tool": "get_weather"}, {"final_contains": "72"}],
    )
    criteria = build_criteria(config, weather)
    assert [c.name for c in criteria] == [
        "tool_trajectory_avg_score",
        "response_match_score",
        "completes",
        "calls_tool",
        "final_contains",
    ]
    assert [c.label for c in criteria] == [
        "trajectory IN_ORDER",
        "response ROUGE-1 >= 0.7",
        "completes",
        "calls get_weather",
        'final contains "72"',
    ]
    assert [c.threshold for c in criteria] == [1.0, 0.7, 1.0, 1.0, 1.0]

    good = trial(
        turn(
            [made("geocode", city="New York"), made("get_weather", location="New York")],
            final="It is sunny in New York, 72 degrees",
        )
    )
    results = [await c.evaluate(context(weather, good, config)) for c in criteria]
    assert [r.status for r in results] == ["passed"] * 5

    bad = trial(turn([made("get_time")], final="no idea"))
    results = [await c.evaluate(context(weather, bad, config)) for c in criteria]
    assert [r.status for r in results] == ["failed", "failed", "passed", "failed", "failed"]


def test_the_default_config_is_adks():
    criteria = build_criteria(EvalConfig.default(), case(invocation()))
    assert [(c.name, c.label, c.threshold) for c in criteria] == [
        ("tool_trajectory_avg_score", "trajectory EXACT", 1.0),
        ("response_match_score", "response ROUGE-1 >= 0.8", 0.8),
    ]


def test_a_config_expectation_without_its_field_fails_at_build_time():
    config = EvalConfig.model_validate({"criteria": {"calls_tool": {}}})
    with pytest.raises(ValueError, match="criterion 'calls_tool' needs 'name'"):
        build_criteria(config, case(invocation()))


def test_an_unknown_criterion_lists_the_known_ones():
    config = EvalConfig.model_validate({"criteria": {"trajectory_score": 1.0}})
    with pytest.raises(UnknownCriterion, match="unknown criterion 'trajectory_score'") as caught:
        build_criteria(config, case(invocation()))
    for name in ("tool_trajectory_avg_score", "response_match_score", "calls_tool"):
        assert name in str(caught.value)


# --- ADK's defaults fill only what a case leaves undefined ------------------------------

SEED_EXPECTATIONS = ["completes", {"calls_tool": "session_note_append"}, {"final_contains": "7"}]


def written(**fields) -> Invocation:
    """An invocation as a file writes it: only the keys given are set."""
    return Invocation.model_validate({"user_content": "question", **fields})


def _names(config: EvalConfig, judged) -> list[str]:
    return [c.name for c in build_criteria(config, judged)]


def test_the_default_config_marks_its_criteria_as_defaults():
    config = EvalConfig.default()
    assert config.defaulted_criteria == ["tool_trajectory_avg_score", "response_match_score"]
    asked = EvalConfig.model_validate({"criteria": {"response_match_score": 0.8}})
    assert asked.defaulted_criteria == []


def test_an_expectation_only_case_gets_no_default_criteria():
    judged = case(written(), expectations=SEED_EXPECTATIONS)
    assert _names(EvalConfig.default(), judged) == ["completes", "calls_tool", "final_contains"]


def test_a_case_with_expectations_gets_the_defaults_whose_reference_it_gives():
    with_trajectory = case(
        written(expected_tool_trajectory=[{"name": "session_note_append"}]),
        expectations=["completes"],
    )
    assert _names(EvalConfig.default(), with_trajectory) == [
        "tool_trajectory_avg_score",
        "completes",
    ]
    no_tools = case(written(intermediate_data={"tool_uses": []}), expectations=["completes"])
    assert _names(EvalConfig.default(), no_tools) == ["tool_trajectory_avg_score", "completes"]
    with_answer = case(written(final_response="7"), expectations=["completes"])
    assert _names(EvalConfig.default(), with_answer) == ["response_match_score", "completes"]


def test_a_case_without_expectations_gets_adks_defaults_as_adk_applies_them():
    bare = case(written(final_response="hello"))
    assert _names(EvalConfig.default(), bare) == [
        "tool_trajectory_avg_score",
        "response_match_score",
    ]


def test_criteria_a_config_asks_for_apply_to_every_case():
    config = EvalConfig.model_validate({"criteria": {"tool_trajectory_avg_score": 1.0}})
    judged = case(written(), expectations=["completes"])
    assert _names(config, judged) == ["tool_trajectory_avg_score", "completes"]


def test_a_mistyped_criterion_gets_the_near_match_beside_the_list():
    config = EvalConfig.model_validate({"criteria": {"response_match_scor": 0.8}})
    with pytest.raises(UnknownCriterion) as caught:
        build_criteria(config, case(invocation()))
    message = str(caught.value)
    assert message.endswith("; did you mean 'response_match_score'?")
    assert "expected one of calls_tool, " in message and "\n" not in message
    far = EvalConfig.model_validate({"criteria": {"zzz": 1.0}})
    with pytest.raises(UnknownCriterion) as caught:
        build_criteria(far, case(invocation()))
    assert "did you mean" not in str(caught.value)
