"""Small builders for the criterion tests: cases, trials and contexts written inline."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agentflow_eval.criteria.base import CriterionContext
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalCase, Invocation, Message, ToolCall
from agentflow_eval.models.results import RecordedToolCall, Trial, TrialError, Turn


def expect(name: str, **args: Any) -> ToolCall:
    """An expected tool call."""
    return ToolCall(name=name, args=args)


def made(name: str, **args: Any) -> RecordedToolCall:
    """A tool call the agent made."""
    return RecordedToolCall(name=name, args=args)


def invocation(
    tools: list[ToolCall] | None = None, final: str | None = None, text: str = "question"
) -> Invocation:
    return Invocation(
        user_content=Message.of(text),
        expected_tool_trajectory=tools or [],
        expected_final_response=Message.of(final, role="model") if final is not None else None,
    )


def case(*invocations: Invocation, eval_id: str = "case", **fields: Any) -> EvalCase:
    return EvalCase(eval_id=eval_id, conversation=list(invocations), **fields)


def scenario_case(eval_id: str = "simulated") -> EvalCase:
    return EvalCase.model_validate(
        {
            "eval_id": eval_id,
            "conversation_scenario": {
                "starting_prompt": "hi",
                "conversation_plan": "ask about the weather",
            },
        }
    )


def turn(calls: list[RecordedToolCall] | None = None, final: str | None = "ok") -> Turn:
    return Turn(
        invocation_id="inv", user_text="question", tool_calls=calls or [], final_response=final
    )


def trial(*turns: Turn, error: str | None = None) -> Trial:
    return Trial(
        case_id="case",
        trial_index=0,
        turns=list(turns),
        error=TrialError(kind="exception", message=error) if error else None,
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def context(case: EvalCase, trial: Trial, config: EvalConfig | None = None) -> CriterionContext:
    return CriterionContext(case=case, trial=trial, config=config or EvalConfig())
