"""A trial's turns show their events as a timeline: steps, handoffs, model calls with
their tokens, tool calls with results or errors, what the agent said — in order, with
when and who."""

from __future__ import annotations

from support.report_page import case_details
from support.sample_results import sample_run

from agentflow_eval.models.results import (
    HandoffEvent,
    MessageEvent,
    ModelCallEvent,
    NodeEvent,
    RecordedToolCall,
    ToolCallEvent,
    Usage,
)
from agentflow_eval.report.html import render_html


def test_the_events_of_a_turn_are_its_timeline() -> None:
    run, _ = sample_run(cases=1, trials=1)
    (turn,) = run.trials[0].trial.turns
    turn.events = [
        NodeEvent(name="triage", at_ms=1.0, author="triage"),
        ModelCallEvent(model="openai/gpt-4o-mini", usage=Usage(total_tokens=42), at_ms=2.0),
        HandoffEvent(source="triage", target="billing_agent", at_ms=3.0),
        NodeEvent(name="lookup", path=["billing_agent"], at_ms=4.0),
        ToolCallEvent(
            call=RecordedToolCall(name="refund", args={"id": 7}, error="ValueError: no such order"),
            at_ms=1500.0,
            author="billing_agent",
        ),
        MessageEvent(text="Sorry, no such order.", final=True, at_ms=1600.0),
    ]
    case_id = run.cases[0].case_id
    (shown,) = case_details(render_html(run), case_id)["trials"][0]["turns"]
    assert shown["timeline"] == [
        ["1 ms", "step", "triage", "triage"],
        ["2 ms", "model", None, "openai/gpt-4o-mini · 42 tok"],
        ["3 ms", "handoff", None, "triage → billing_agent"],
        ["4 ms", "step", None, "billing_agent › lookup"],
        ["1.5 s", "tool", "billing_agent", 'refund({"id": 7}) → error: ValueError: no such order'],
        ["1.6 s", "answer", None, "Sorry, no such order."],
    ]
