"""within_budget: a trial (or each turn) is held to limits on what it spent — cost,
tokens, model calls, tool calls, latency — measured from its recorded events."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentflow_eval.criteria.budget import BudgetOptions, build_within_budget
from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.results import (
    ModelCallEvent,
    RecordedToolCall,
    ToolCallEvent,
    Trial,
    Turn,
    Usage,
)
from tests.unit.criteria.criteria_helpers import case, context, invocation


def spending_turn(tokens: int, calls: int, tools: int, latency_ms: float) -> Turn:
    events = [
        ModelCallEvent(
            model="m",
            usage=Usage(
                prompt_tokens=tokens // calls,
                completion_tokens=0,
                total_tokens=tokens // calls,
                cost_usd=0.001,
                calls=1,
            ),
        )
        for _ in range(calls)
    ]
    events += [ToolCallEvent(call=RecordedToolCall(name="t", args={})) for _ in range(tools)]
    return Turn(invocation_id="i", user_text="q", events=events, latency_ms=latency_ms)


def trial_of(*turns: Turn, duration_ms: float) -> Trial:
    return Trial(
        case_id="case",
        trial_index=0,
        turns=list(turns),
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
        duration_ms=duration_ms,
    )


def budget(**options: object):  # type: ignore[no-untyped-def]
    return build_within_budget(
        "within_budget", CriterionConfig.model_validate(options), EvalConfig()
    )


TWO_TURNS = trial_of(
    spending_turn(tokens=600, calls=2, tools=1, latency_ms=800),
    spending_turn(tokens=900, calls=3, tools=4, latency_ms=1500),
    duration_ms=2400,
)


async def test_a_trial_within_every_limit_passes() -> None:
    criterion = budget(max_tokens=1500, max_model_calls=5, max_tool_calls=5, max_cost_usd=0.01)
    result = await criterion.evaluate(context(case(invocation()), TWO_TURNS))
    assert (result.status, result.score) == ("passed", 1.0)
    assert criterion.label == (
        "within budget per trial (cost ≤ $0.0100, tokens ≤ 1,500, model calls ≤ 5, tool calls ≤ 5)"
    )


async def test_each_limit_exceeded_is_named() -> None:
    criterion = budget(max_tokens=1000, max_tool_calls=4, max_latency_ms=3000)
    result = await criterion.evaluate(context(case(invocation()), TWO_TURNS))
    assert (result.status, result.score) == ("failed", 0.0)
    assert result.reason == "the trial: tokens 1,500 > 1,000; the trial: tool calls 5 > 4"


async def test_per_turn_holds_each_turn_to_the_limits() -> None:
    criterion = budget(max_tool_calls=3, max_latency_ms=1000, per="turn")
    result = await criterion.evaluate(context(case(invocation()), TWO_TURNS))
    assert result.status == "failed"
    assert result.reason == "turn 2: tool calls 4 > 3; turn 2: latency 1,500 ms > 1,000 ms"


def test_a_budget_without_a_limit_is_refused_when_the_config_loads(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="give at least one limit"):
        BudgetOptions.model_validate({})
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"within_budget": {"per": "turn"}}}))
    with pytest.raises(EvalFileError) as refused:
        load_config(config)
    assert str(refused.value) == (
        f"{config}: criteria.within_budget: give at least one limit: max_cost_usd, "
        "max_tokens, max_model_calls, max_tool_calls, max_latency_ms"
    )


def unpriced_turn() -> Turn:
    call = ModelCallEvent(model="self-hosted", usage=Usage.of_call(100, 20, None))
    return Turn(invocation_id="i", user_text="q", events=[call], latency_ms=10)


async def test_a_cost_limit_gives_no_verdict_when_some_price_is_unknown() -> None:
    trial = trial_of(spending_turn(100, 1, 0, 10), unpriced_turn(), duration_ms=30)
    result = await budget(max_cost_usd=1.0).evaluate(context(case(invocation()), trial))
    assert result.status == "not_evaluated"
    assert result.reason == "cost unknown: 1 model call(s) have no known price"
    # limits on what is known still judge the trial
    result = await budget(max_tokens=10).evaluate(context(case(invocation()), trial))
    assert result.status == "failed"
