"""node_trajectory_avg_score: the steps a turn took (its node events) against the turn's
expected_nodes, with the tool trajectory's match types; a step may be named with the
subgraphs or agents that hold it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentflow_eval.criteria.base import CriterionContext
from agentflow_eval.criteria.registry import build_criteria, build_criterion
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalCase
from agentflow_eval.models.results import NodeEvent, Trial, Turn


def case(*expected: list[str]) -> EvalCase:
    return EvalCase.model_validate(
        {
            "eval_id": "billing",
            "conversation": [
                {"user_content": f"turn {i}", "expected_nodes": nodes}
                for i, nodes in enumerate(expected)
            ],
        }
    )


def trial(*steps: list[tuple[str, list[str]]]) -> Trial:
    turns = [
        Turn(
            invocation_id=f"t{i}",
            user_text=f"turn {i}",
            events=[NodeEvent(name=name, path=path) for name, path in nodes],
        )
        for i, nodes in enumerate(steps)
    ]
    return Trial(case_id="billing", trial_index=0, turns=turns, started_at=datetime.now(UTC))


async def score(options: dict[str, object], expected: EvalCase, actual: Trial) -> float:
    config = EvalConfig(criteria={"node_trajectory_avg_score": CriterionConfig(**options)})
    criterion = build_criterion(
        "node_trajectory_avg_score", config.criteria["node_trajectory_avg_score"], config
    )
    result = await criterion.evaluate(CriterionContext(case=expected, trial=actual, config=config))
    assert result.score is not None
    return result.score


TOOK = [("triage", []), ("lookup", ["billing_agent"]), ("billing_agent", [])]


@pytest.mark.parametrize(
    ("options", "expected", "value"),
    [
        ({}, ["triage", "lookup", "billing_agent"], 1.0),
        ({}, ["triage", "billing_agent"], 0.0),  # EXACT: a step more than expected
        ({"match_type": "IN_ORDER"}, ["triage", "billing_agent"], 1.0),
        ({"match_type": "IN_ORDER"}, ["billing_agent", "triage"], 0.5),
        ({"match_type": "ANY_ORDER"}, ["billing_agent", "triage"], 1.0),
        ({"match_type": "IN_ORDER"}, ["billing_agent/lookup"], 1.0),  # with its parent
        ({"match_type": "IN_ORDER"}, ["support/lookup"], 0.0),
        ({"match_type": "in-order", "scoring": "all_or_nothing"}, ["triage", "refunds"], 0.0),
    ],
)
async def test_steps_match_like_tool_calls(
    options: dict[str, object], expected: list[str], value: float
) -> None:
    assert await score(options, case(expected), trial(TOOK)) == value


async def test_turns_average_and_a_turn_never_reached_scores_zero() -> None:
    two_turns = case(["triage"], ["billing_agent"])
    assert await score({}, two_turns, trial([("triage", [])], [("billing_agent", [])])) == 1.0
    assert await score({}, two_turns, trial([("triage", [])])) == 0.5


async def test_a_case_without_expected_nodes_is_skipped_and_defaults_never_add_it() -> None:
    config = EvalConfig(criteria={"node_trajectory_avg_score": CriterionConfig()})
    plain = EvalCase.model_validate({"eval_id": "x", "conversation": [{"user_content": "hi"}]})
    (criterion,) = build_criteria(config, plain)
    result = await criterion.evaluate(
        CriterionContext(case=plain, trial=trial([("triage", [])]), config=config)
    )
    assert result.status == "skipped"
    assert "node_trajectory_avg_score" not in EvalConfig.default().criteria
