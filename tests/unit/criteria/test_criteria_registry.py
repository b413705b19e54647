"""build_criteria with the built-in deterministic criteria: config entries, then the case's
own expectations."""

from __future__ import annotations

import pytest
from criteria_helpers import case, context, expect, invocation, made, trial, turn

from agentflow_eval.criteria.registry import UnknownCriterion, build_criteria, known_criteria
from agentflow_eval.models.config import EvalConfig


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
