"""``output_matches``: a component's output (or an agent's answer) against the expected
one, exactly, by containment or as a JSON subset; and which criteria judge a component
case (its own expectation; ADK's defaults never; answer criteria a config names, too)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agentflow_eval.criteria.base import CriterionContext
from agentflow_eval.criteria.coverage import unjudged_warnings
from agentflow_eval.criteria.registry import build_criteria
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalCase, EvalSet
from agentflow_eval.models.results import CriterionResult, Trial, TrialError, Turn


def component(expected: Any, match: str = "exact", **fields: Any) -> EvalCase:
    return EvalCase.model_validate(
        {
            "eval_id": "c",
            "component": "m:f",
            "input": "text",
            "expected_output": expected,
            "output_match": match,
            **fields,
        }
    )


def trial_with(output: Any = None, text: str | None = None, error: bool = False) -> Trial:
    turn = Turn(invocation_id="c-1", user_text="text", output=output, final_response=text)
    return Trial(
        case_id="c",
        trial_index=0,
        turns=[turn],
        started_at=datetime.now(UTC),
        error=TrialError(kind="exception", message="boom") if error else None,
    )


async def verdicts(case: EvalCase, trial: Trial, config: EvalConfig) -> list[CriterionResult]:
    ctx = CriterionContext(case=case, trial=trial, config=config)
    return [await criterion.evaluate(ctx) for criterion in build_criteria(config, case)]


async def test_a_component_case_is_judged_by_its_output_alone() -> None:
    case = component({"queue": "billing"}, "json_subset")
    (passed,) = await verdicts(
        case, trial_with({"queue": "billing", "score": 0.9}), EvalConfig.default()
    )
    assert (passed.criterion, passed.status, passed.score) == ("output_matches", "passed", 1.0)
    assert passed.label == "output matches (json_subset)"
    assert passed.details["got"] == {"queue": "billing", "score": 0.9}

    (failed,) = await verdicts(case, trial_with({"queue": "sales"}), EvalConfig.default())
    assert failed.status == "failed"
    assert failed.reason == 'expected {"queue": "billing"} (json_subset), got {"queue": "sales"}'


async def test_the_raw_output_is_compared_not_its_text() -> None:
    (verdict,) = await verdicts(component(7), trial_with(7.0, text="7.0"), EvalConfig.default())
    assert verdict.status == "passed"
    (verdict,) = await verdicts(component("7"), trial_with(7, text="7"), EvalConfig.default())
    assert verdict.status == "failed"  # a number is not the text "7"


async def test_a_component_that_raised_fails_its_output() -> None:
    (verdict,) = await verdicts(component("x"), trial_with(error=True), EvalConfig.default())
    assert verdict.status == "failed" and "did not finish (exception: boom)" in str(verdict.reason)


async def test_answer_criteria_a_config_names_judge_the_output_as_text() -> None:
    config = EvalConfig.model_validate({"criteria": {"response_match_score": 0.8}})
    case = component("weather")
    results = await verdicts(case, trial_with("weather", text="weather"), config)
    assert {r.criterion: r.status for r in results} == {
        "response_match_score": "passed",
        "output_matches": "passed",
    }


async def test_for_an_agent_it_reads_the_answer() -> None:
    agent_case = EvalCase.model_validate(
        {
            "eval_id": "c",
            "conversation": [{"user_content": "Weather?", "expected_final_response": "sunny"}],
        }
    )
    contains = EvalConfig.model_validate({"criteria": {"output_matches": {"match": "contains"}}})
    (verdict,) = await verdicts(agent_case, trial_with(text="It is sunny in Rome."), contains)
    assert verdict.status == "passed"  # against the reference answer, by containment
    given = EvalConfig.model_validate({"criteria": {"output_matches": {"expected": "Rome"}}})
    (verdict,) = await verdicts(agent_case, trial_with(text="It is sunny in Rome."), given)
    assert verdict.status == "failed"  # exact, against the expected the config gives
    bare = EvalCase.model_validate({"eval_id": "c", "conversation": [{"user_content": "Hi"}]})
    (verdict,) = await verdicts(bare, trial_with(text="Hello"), contains)
    assert verdict.status == "skipped"


def test_no_warning_says_a_component_cases_reference_goes_unjudged() -> None:
    eval_set = EvalSet(eval_set_id="s", eval_cases=[component("weather")])
    assert unjudged_warnings(eval_set, EvalConfig.default()) == []
    config = EvalConfig.model_validate({"criteria": {"tool_trajectory_avg_score": 1.0}})
    assert unjudged_warnings(eval_set, config) == []
