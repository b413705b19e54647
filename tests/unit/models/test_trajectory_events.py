"""A turn's events, in order: what a recorder collects, the views criteria read derived
from them, and results written before events were recorded still read."""

from __future__ import annotations

import json

from agentflow_eval.agents.base import TrajectoryRecorder
from agentflow_eval.models.results import (
    HandoffEvent,
    MessageEvent,
    ModelCallEvent,
    NodeEvent,
    ToolCallEvent,
    Turn,
)


def recorded_turn() -> Turn:
    recorder = TrajectoryRecorder()
    recorder.node("router", author="router")
    recorder.usage(10, 4, 0.001, model="openai/gpt-4o-mini", latency_ms=12.5, author="router")
    recorder.handoff("weather_agent", source="router")
    recorder.node("weather_agent", path=["router"])
    recorder.intermediate("Let me look that up.", author="weather_agent")
    with recorder.tool("get_weather", {"city": "Oslo"}, author="weather_agent") as call:
        call.result = {"condition": "snow"}
    recorder.usage(20, 6, model="openai/gpt-4o-mini")
    turn = Turn(invocation_id="t1", user_text="Weather in Oslo?", final_response="Snow.")
    turn.events = recorder.events
    recorder.add(MessageEvent(text="Snow.", final=True, author="weather_agent"))
    return turn


def test_events_keep_their_order_and_the_views_derive_from_them() -> None:
    turn = recorded_turn()
    kinds = [event.kind for event in turn.events]
    assert kinds == [
        "node", "model_call", "handoff", "node", "message", "tool_call", "model_call", "message"
    ]  # fmt: skip
    stamps = [event.at_ms for event in turn.events]
    assert stamps == sorted(stamps) and stamps[0] > 0
    assert [(c.name, c.args, c.result) for c in turn.tool_calls] == [
        ("get_weather", {"city": "Oslo"}, {"condition": "snow"})
    ]
    assert turn.intermediate_responses == ["Let me look that up."]  # the answer is not one
    assert (turn.usage.prompt_tokens, turn.usage.completion_tokens, turn.usage.calls) == (30, 10, 2)
    assert [(n.name, n.path) for n in turn.nodes] == [("router", []), ("weather_agent", ["router"])]
    assert [(h.source, h.target) for h in turn.handoffs] == [("router", "weather_agent")]


def test_a_turn_round_trips_with_its_views_written_for_readers() -> None:
    turn = recorded_turn()
    document = json.loads(turn.model_dump_json())
    assert document["tool_calls"][0]["name"] == "get_weather"  # readers of schema 1.0
    assert document["usage"]["calls"] == 2
    again = Turn.model_validate(document)
    assert again == turn
    assert isinstance(again.events[1], ModelCallEvent) and again.events[1].latency_ms == 12.5


def test_a_turn_written_before_events_reads_its_views_into_events() -> None:
    old = {
        "invocation_id": "t1",
        "user_text": "Weather in Oslo?",
        "tool_calls": [{"name": "get_weather", "args": {"city": "Oslo"}, "result": "snow"}],
        "intermediate_responses": ["Checking."],
        "final_response": "Snow.",
        "latency_ms": 5.0,
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5, "calls": 1},
    }
    turn = Turn.model_validate(old)
    assert [type(event) for event in turn.events] == [MessageEvent, ToolCallEvent, ModelCallEvent]
    assert turn.tool_calls[0].result == "snow" and turn.intermediate_responses == ["Checking."]
    assert turn.usage.total_tokens == 5 and turn.usage.calls == 1
    assert not any(isinstance(e, NodeEvent | HandoffEvent) for e in turn.events)
