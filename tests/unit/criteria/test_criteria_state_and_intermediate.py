"""final_session_state_match and intermediate_response_match_score: what ADK files carry
beyond the final answer and the tool calls is judged, not silently dropped."""

from __future__ import annotations

import pytest
from criteria_helpers import case, context, invocation, scenario_case, trial, turn

from agentflow_eval.criteria.registry import build_criterion
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import Invocation
from agentflow_eval.models.results import Turn


def criterion(name: str, **options):
    return build_criterion(name, CriterionConfig(**options), EvalConfig())


def with_state(state):
    judged = case(invocation(), final_session_state=state)
    return judged


def ended_with(state) -> object:
    tried = trial(turn())
    tried.final_session_state = state
    return tried


# --- final_session_state_match ------------------------------------------------------------


async def test_an_exact_match_passes_and_the_label_says_the_mode():
    crit = criterion("final_session_state_match")
    assert crit.label == "final session state (exact)"
    result = await crit.evaluate(
        context(with_state({"notes": ["buy milk"]}), ended_with({"notes": ["buy milk"]}))
    )
    assert (result.status, result.score, result.reason) == ("passed", 1.0, None)


async def test_exact_counts_every_key_of_both_sides():
    result = await criterion("final_session_state_match").evaluate(
        context(
            with_state({"notes": ["buy milk"], "count": 1}),
            ended_with({"notes": ["buy eggs"], "count": 1, "draft": "x"}),
        )
    )
    assert result.status == "failed"
    assert result.score == pytest.approx(1 / 3)  # count agrees; notes differ; draft unexpected
    assert result.details["different"] == ["notes"]
    assert result.details["unexpected"] == ["draft"]
    assert result.reason == "different: notes; unexpected: draft"


async def test_subset_lets_the_agent_keep_other_keys():
    crit = criterion("final_session_state_match", state_match="SUBSET")
    passing = await crit.evaluate(
        context(with_state({"count": 1}), ended_with({"count": 1, "draft": "x"}))
    )
    assert (passing.status, passing.score) == ("passed", 1.0)
    missing = await crit.evaluate(context(with_state({"count": 1, "a": 2}), ended_with({})))
    assert (missing.score, missing.details["missing"]) == (0.0, ["count", "a"])


@pytest.mark.parametrize("expected", [None, {}])
async def test_a_case_without_an_expected_state_is_skipped(expected):
    result = await criterion("final_session_state_match").evaluate(
        context(with_state(expected), ended_with({"x": 1}))
    )
    assert result.status == "skipped"


async def test_an_agent_that_exposes_no_state_is_not_evaluated():
    result = await criterion("final_session_state_match").evaluate(
        context(with_state({"x": 1}), ended_with(None))
    )
    assert result.status == "not_evaluated"
    assert "expose no state" in (result.reason or "")


# --- intermediate_response_match_score ----------------------------------------------------


def talking(*texts: str) -> Invocation:
    return Invocation.model_validate(
        {
            "user_content": "q",
            "intermediate_data": {
                "intermediate_responses": [["agent", [{"text": t}]] for t in texts]
            },
        }
    )


def said(*texts: str) -> Turn:
    return Turn(invocation_id="inv", user_text="q", intermediate_responses=list(texts))


async def test_intermediate_responses_are_scored_by_rouge1_per_invocation():
    crit = criterion("intermediate_response_match_score")
    assert crit.label == "intermediate responses ROUGE-1 >= 0.8"
    judged = case(talking("Checking the weather now."), invocation(), talking("Заказ отправлен."))
    tried = trial(said("Checking the weather now."), said("ignored"), said("Заказ отправлен."))
    result = await crit.evaluate(context(judged, tried))
    assert (result.status, result.score) == ("passed", 1.0)
    assert [row["invocation_id"] for row in result.details["invocations"]] == ["case-1", "case-3"]


async def test_missing_or_different_intermediate_responses_lower_the_score():
    judged = case(talking("Let me look that up."), talking("One moment."))
    result = await criterion("intermediate_response_match_score").evaluate(
        context(judged, trial(said("Something else entirely.")))
    )
    assert result.status == "failed" and result.score == 0.0
    assert result.reason == "no turn recorded for case-2"


async def test_no_expected_intermediate_responses_is_skipped():
    result = await criterion("intermediate_response_match_score").evaluate(
        context(case(invocation()), trial(said("hi")))
    )
    assert result.status == "skipped"
    scenario = await criterion("intermediate_response_match_score").evaluate(
        context(scenario_case(), trial(said("hi")))
    )
    assert scenario.status == "skipped"
