"""A trial cut to the agent's next step, for a case judged on that step alone
(``next_step_only``): what the criteria see. The trials file and the report keep the whole
trial.

The step is what the agent did with its first model call: the tool calls it made before
its second model call (a model call after a tool call ends the step; for an agent that
records no model calls, its first tool call alone), or, when it called no tool, its
answer. A step that called tools has no final response: the answer came steps later.
"""

from __future__ import annotations

from agentflow_eval.models.results import (
    MessageEvent,
    ModelCallEvent,
    ToolCallEvent,
    TrajectoryEvent,
    Trial,
    Turn,
)

__all__ = ["next_step_of", "step_events"]


def next_step_of(trial: Trial) -> Trial:
    """``trial`` with its (one) turn cut to the agent's next step (see the module)."""
    if not trial.turns:
        return trial
    first = trial.turns[0]
    events = step_events(first.events)
    if not any(isinstance(event, ToolCallEvent) for event in events):
        return trial.model_copy(update={"turns": [first]})
    cut = Turn(
        invocation_id=first.invocation_id,
        user_text=first.user_text,
        events=[e for e in events if not (isinstance(e, MessageEvent) and e.final)],
        final_response=None,
        latency_ms=first.latency_ms,
    )
    return trial.model_copy(update={"turns": [cut]})


def step_events(events: list[TrajectoryEvent]) -> list[TrajectoryEvent]:
    """The events of the first step: everything before the first model call that follows
    a tool call (or up to the first tool call, when no model call is recorded); all of
    them when no tool was called."""
    first_call = next((i for i, e in enumerate(events) if isinstance(e, ToolCallEvent)), None)
    if first_call is None:
        return list(events)
    if not any(isinstance(event, ModelCallEvent) for event in events):
        return list(events[: first_call + 1])
    for index in range(first_call + 1, len(events)):
        if isinstance(events[index], ModelCallEvent):
            return list(events[:index])
    return list(events)
