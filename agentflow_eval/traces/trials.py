"""A production trace as a trial of an implicit case: its turns read by the generative-AI
conventions, as ``eval-set add --from-session`` reads an OTLP export
(:func:`agentflow_eval.files.genai_spans.turns_of`: model calls with their usage and
latency, tool calls with arguments, results and errors, agent runs as steps, the answer);
its start, duration and, when its root span failed, its error from the trace.

The implicit case holds the trace's user turns (no reference: what the agent should have
done is not in a production trace) and where the trace came from, so a report can name
it and a failure can become a reviewed case.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agentflow_eval.files.genai_spans import turns_of
from agentflow_eval.models.evalset import EvalCase, Invocation, Message
from agentflow_eval.models.results import Trial, TrialError, Turn
from agentflow_eval.redaction import redact_named_data
from agentflow_eval.traces.reading import RecordedTrace
from agentflow_eval.traces.sessions import RecordedSession

__all__ = ["NotAnAgentTrace", "Recorded", "implicit_case", "recorded_trial", "trace_time"]

Recorded = RecordedTrace | RecordedSession
"""A production trace: an OTLP trace's spans, or a conversation an agent kept."""


class NotAnAgentTrace(ValueError):
    """A trace with no agent turn in it (an HTTP request, a job: other spans the same
    collector keeps), which is not scored."""


def trace_time(trace: Recorded) -> datetime:
    """When the trace began (UTC)."""
    return datetime.fromtimestamp(trace.start_ns / 1e9, UTC)


def recorded_turns(trace: Recorded) -> list[Turn]:
    """The agent turns the trace tells; raises :class:`NotAnAgentTrace` when none has a
    user message."""
    turns = (
        list(trace.conversation.turns)
        if isinstance(trace, RecordedSession)
        else turns_of(trace.spans)
    )
    if not any(turn.user_text for turn in turns):
        raise NotAnAgentTrace(
            f"{trace.named}: no agent turn (no span with gen_ai.operation.name chat, "
            "execute_tool or invoke_agent carrying a user message)"
        )
    return turns


def recorded_trial(
    trace: Recorded, case_id: str, trial_index: int, turns: list[Turn] | None = None
) -> Trial:
    """Trial ``trial_index`` of ``case_id``: what the trace recorded (its ``turns``, when
    read already), redacted once more as a whole (arguments its tool calls were given
    are read from JSON texts)."""
    turns = turns if turns is not None else recorded_turns(trace)
    error = None
    state = None
    if isinstance(trace, RecordedSession):
        state = trace.conversation.final_state
    elif trace.root is not None and trace.root.error is not None:
        error = TrialError(kind="exception", message=trace.root.error, type="trace status ERROR")
    started = trace_time(trace)
    trial = Trial(
        case_id=case_id,
        trial_index=trial_index,
        turns=turns,
        error=error,
        started_at=started,
        duration_ms=max(0.0, (trace.end_ns - trace.start_ns) / 1e6),
        final_session_state=state,
    )
    clean: dict[str, Any] = redact_named_data(trial.model_dump(mode="json"))
    return Trial.model_validate(clean)


def implicit_case(trace: Recorded, case_id: str, turns: list[Turn]) -> EvalCase:
    """The case a trace stands for: its user turns (from where a kept session started),
    no reference, and where it came from (``metadata``: the trace id, its start, the
    object it was read from)."""
    started_with = trace.conversation.session_input if isinstance(trace, RecordedSession) else None
    return EvalCase(
        session_input=started_with,
        eval_id=case_id,
        conversation=[
            Invocation(
                invocation_id=f"{case_id}-{number}",
                user_content=Message.model_validate(turn.user_text),
            )
            for number, turn in enumerate(turns, 1)
        ],
        metadata={
            "trace_id": trace.trace_id,
            "trace_time": trace_time(trace).isoformat(),
            "trace_object": trace.key,
        },
    )
