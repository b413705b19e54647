"""A case judged on the agent's next step: the criteria see the trial cut to its first
step (the tool calls before the second model call, or the answer when no tool was
called); the judged result keeps the whole trial."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agentflow_eval.criteria.registry import build_criteria
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalCase
from agentflow_eval.models.results import (
    MessageEvent,
    ModelCallEvent,
    RecordedToolCall,
    ToolCallEvent,
    TrajectoryEvent,
    Trial,
    Turn,
)
from agentflow_eval.run.judging import judge_trial
from agentflow_eval.run.next_step import next_step_of


def model() -> ModelCallEvent:
    return ModelCallEvent(model="m")


def tool(name: str, **args: Any) -> ToolCallEvent:
    return ToolCallEvent(call=RecordedToolCall(name=name, args=args))


def answer(text: str) -> MessageEvent:
    return MessageEvent(text=text, final=True)


def trial_of(*events: TrajectoryEvent, final: str | None = "done") -> Trial:
    turn = Turn(invocation_id="c-1", user_text="Book it", events=list(events), final_response=final)
    return Trial(case_id="c", trial_index=0, turns=[turn], started_at=datetime.now(UTC))


def booking_case(expected: list[dict[str, Any]], **fields: Any) -> EvalCase:
    return EvalCase.model_validate(
        {
            "eval_id": "c",
            "next_step_only": True,
            "conversation": [{"user_content": "Book it", "expected_tool_trajectory": expected}],
            **fields,
        }
    )


def test_the_step_is_the_calls_before_the_second_model_call() -> None:
    whole = trial_of(
        model(),
        tool("book", flight="AF123"),
        tool("hold_seat", seat="2A"),
        model(),
        tool("send_email", to="me"),
        model(),
        answer("Booked."),
        final="Booked.",
    )
    (turn,) = next_step_of(whole).turns
    assert [call.name for call in turn.tool_calls] == ["book", "hold_seat"]
    assert turn.final_response is None  # the answer came steps later
    assert len(turn.events) == 3
    assert whole.turns[0].final_response == "Booked."  # the trial itself is untouched


def test_an_agent_that_records_no_model_calls_is_judged_on_its_first_call() -> None:
    whole = trial_of(tool("search", to="Paris"), tool("book", flight="AF123"), answer("ok"))
    assert [c.name for c in next_step_of(whole).turns[0].tool_calls] == ["search"]


def test_a_step_without_a_tool_call_is_the_answer() -> None:
    whole = trial_of(model(), answer("Which flight?"), final="Which flight?")
    (turn,) = next_step_of(whole).turns
    assert turn.final_response == "Which flight?" and turn.tool_calls == []


async def test_the_criteria_judge_the_next_step_and_the_result_keeps_the_trial() -> None:
    whole = trial_of(
        model(),
        tool("book", flight="AF123"),
        model(),
        tool("send_email", to="me"),
        model(),
        answer("Booked."),
        final="Booked.",
    )
    config = EvalConfig.model_validate({"criteria": {"tool_trajectory_avg_score": 1.0}})
    right = booking_case([{"name": "book", "args": {"flight": "AF123"}}])
    result = await judge_trial(right, whole, build_criteria(config, right), config, None)
    assert result.status == "passed"
    assert [c.name for c in result.trial.tool_calls] == ["book", "send_email"]  # kept whole

    # the whole trajectory would not pass: without next_step_only the same trial fails
    whole_case = right.model_copy(update={"next_step_only": False})
    result = await judge_trial(whole_case, whole, build_criteria(config, right), config, None)
    assert result.status == "failed"

    wrong = booking_case([{"name": "send_email", "args": {"to": "me"}}])
    result = await judge_trial(wrong, whole, build_criteria(config, wrong), config, None)
    assert result.status == "failed"
