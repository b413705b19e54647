"""ADK's efficiency metrics (tool_call_count_v1, inference_call_count_v1, token_usage_v1,
invocation_duration_v1): informational without a maximum, a per-turn budget with one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.criteria.registry import build_criteria, validation_context
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.models.config import EvalConfig
from tests.unit.criteria.criteria_helpers import case, context, invocation
from tests.unit.criteria.test_budget import TWO_TURNS

# TWO_TURNS: turn 1 has 600 tokens, 2 model calls, 1 tool call, 800 ms; turn 2 has 900
# tokens, 3 model calls, 4 tool calls, 1500 ms


def metric(name: str, entry: object):  # type: ignore[no-untyped-def]
    config = EvalConfig.model_validate({"criteria": {name: entry}}, context=validation_context())
    (built,) = build_criteria(config, case(invocation()))
    return built


@pytest.mark.parametrize(
    ("name", "mean", "per_turn"),
    [
        ("tool_call_count_v1", 2.5, [1, 4]),
        ("inference_call_count_v1", 2.5, [2, 3]),
        ("token_usage_v1", 750, [600, 900]),
        ("invocation_duration_v1", 1.15, [0.8, 1.5]),
    ],
)
async def test_without_a_maximum_the_metric_is_informational(
    name: str, mean: float, per_turn: list[float]
) -> None:
    result = await metric(name, {}).evaluate(context(case(invocation()), TWO_TURNS))
    assert result.status == "passed"
    assert result.details["value"] == pytest.approx(mean)
    assert result.details["per_turn"] == pytest.approx(per_turn)
    assert result.details["informational"] is True


async def test_a_maximum_holds_every_turn_to_it() -> None:
    passing = await metric("tool_call_count_v1", {"max": 4}).evaluate(
        context(case(invocation()), TWO_TURNS)
    )
    assert passing.status == "passed" and passing.label == "tool calls per turn ≤ 4"
    failing = await metric("tool_call_count_v1", 3).evaluate(context(case(invocation()), TWO_TURNS))
    assert failing.status == "failed"
    assert failing.reason == "turn 2: tool calls 4 > 3"
    assert failing.details["value"] == 2.5


async def test_the_duration_maximum_is_in_seconds() -> None:
    within = metric("invocation_duration_v1", {"max": 1.5})
    over = metric("invocation_duration_v1", {"max": 1.2})
    assert (await within.evaluate(context(case(invocation()), TWO_TURNS))).passed
    result = await over.evaluate(context(case(invocation()), TWO_TURNS))
    assert result.reason == "turn 2: latency 1,500 ms > 1,200 ms"
    assert over.label == "duration per turn ≤ 1.2 (s)"


def test_a_threshold_is_refused_with_where_the_maximum_goes(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"token_usage_v1": {"threshold": 0.5}}}))
    with pytest.raises(EvalFileError) as refused:
        load_config(config)
    assert str(refused.value) == (
        f"{config}: criteria.token_usage_v1: an efficiency metric takes no threshold: "
        "give the most per turn as max"
    )
