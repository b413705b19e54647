"""Spans of an instrumented agent read as a trajectory, by the OpenTelemetry semantic
conventions for generative AI (``gen_ai.*``).

The spans come from an OTLP JSON export (:mod:`agentflow_eval.files.sessions.otlp`) or
from a trial's own collector; either way each is a :class:`SpanRecord`. What is read:

=====================  ===========================================================
span                   read into
=====================  ===========================================================
``gen_ai.operation.name = chat`` (or ``text_completion``, ``generate_content``)
                       a model call: ``gen_ai.response.model`` (else
                       ``gen_ai.request.model``), ``gen_ai.usage.input_tokens`` and
                       ``gen_ai.usage.output_tokens``; the text parts of
                       ``gen_ai.output.messages`` as what the agent said
``gen_ai.operation.name = execute_tool``
                       a tool call: ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
                       ``gen_ai.tool.call.arguments`` (a JSON object, else the text
                       under ``input``), ``gen_ai.tool.call.result``
                       (JSON, else text); a span with status ERROR is the call's error
                       (its status message, else its ``exception`` event's message)
``gen_ai.operation.name = invoke_agent``
                       a step: ``gen_ai.agent.name``; its ``final_result`` (Pydantic AI)
                       is the turn's answer
=====================  ===========================================================

A turn is one ``invoke_agent`` span without a parent (one agent run), or, where there is
no such span, one trace. The user's message is the last user text of the turn's first
chat span's ``gen_ai.input.messages``; the answer, the ``final_result`` or the last text
a chat span wrote.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentflow_eval.files.limits import UnreadableFile, parse_json
from agentflow_eval.models.results import (
    MessageEvent,
    ModelCallEvent,
    NodeEvent,
    RecordedToolCall,
    ToolCallEvent,
    TrajectoryEvent,
    Turn,
    Usage,
)

__all__ = ["CHAT_OPERATIONS", "SpanRecord", "events_of", "turns_of"]

CHAT_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})


@dataclass(frozen=True)
class SpanRecord:
    """What is read of one span."""

    name: str
    attributes: Mapping[str, Any]
    start_ns: int
    end_ns: int = 0
    trace_id: str = ""
    span_id: str = ""
    parent_id: str = ""
    error: str | None = None
    """The span's error (status ERROR): its message, else ``"error"``."""
    resource: Mapping[str, Any] = field(default_factory=dict)
    """The attributes of the resource that emitted it (``service.name``,
    ``service.version``), where the source says."""

    @property
    def operation(self) -> str:
        return str(self.attributes.get("gen_ai.operation.name") or "")


def _json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return parse_json(value, "a span attribute")
    except UnreadableFile:  # not JSON, or past a limit: kept as the text it is
        return value


def _texts(messages: Any, role: str) -> list[str]:
    """The text parts of ``messages`` (``gen_ai.*.messages``, JSON) spoken by ``role``."""
    texts = []
    for message in _json(messages) or []:
        if not isinstance(message, dict) or message.get("role") != role:
            continue
        for part in message.get("parts") or []:
            if isinstance(part, dict) and part.get("type") == "text":
                text = part.get("content", part.get("text"))
                if isinstance(text, str) and text:
                    texts.append(text)
    return texts


def _arguments(value: Any) -> dict[str, Any]:
    """A tool call's arguments as a dict: a JSON object as it is; anything else (text that
    is not JSON, cut short, or another JSON value) under ``"input"``, as the agents' span
    reader keeps it."""
    if isinstance(value, dict):
        return value
    return {} if value is None or value == "" else {"input": value}


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def events_of(spans: Iterable[SpanRecord], started_ns: int) -> list[TrajectoryEvent]:
    """The events ``spans`` record, in the order they started; ``started_ns`` is when the
    turn began (the events' ``at_ms`` count from it)."""
    events: list[TrajectoryEvent] = []
    for span in sorted(spans, key=lambda s: s.start_ns):
        at_ms = max(0.0, (span.start_ns - started_ns) / 1e6)
        attrs = span.attributes
        author = attrs.get("gen_ai.agent.name")
        who = str(author) if author else None
        if span.operation == "invoke_agent":
            events.append(NodeEvent(name=who or span.name, at_ms=at_ms, author=who))
        elif span.operation == "execute_tool":
            args = _json(attrs.get("gen_ai.tool.call.arguments"))
            events.append(
                ToolCallEvent(
                    call=RecordedToolCall(
                        name=str(attrs.get("gen_ai.tool.name") or span.name),
                        args=_arguments(args),
                        result=_json(attrs.get("gen_ai.tool.call.result")),
                        error=span.error,
                        duration_ms=max(0.0, (span.end_ns - span.start_ns) / 1e6),
                        id=attrs.get("gen_ai.tool.call.id"),
                    ),
                    at_ms=at_ms,
                    author=who,
                )
            )
        elif span.operation in CHAT_OPERATIONS:
            prompt = _int(attrs.get("gen_ai.usage.input_tokens"))
            completion = _int(attrs.get("gen_ai.usage.output_tokens"))
            model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model")
            events.append(
                ModelCallEvent(
                    model=str(model) if model else None,
                    usage=Usage(
                        prompt_tokens=prompt,
                        completion_tokens=completion,
                        total_tokens=prompt + completion,
                        calls=1,
                        unpriced_calls=1,  # a recorded session carries no price
                    ),
                    latency_ms=max(0.0, (span.end_ns - span.start_ns) / 1e6) or None,
                    at_ms=at_ms,
                    author=who,
                )
            )
            for text in _texts(attrs.get("gen_ai.output.messages"), "assistant"):
                events.append(MessageEvent(text=text, at_ms=at_ms, author=who))
    return events


def _turn_roots(spans: list[SpanRecord]) -> list[list[SpanRecord]]:
    """The spans of each turn, turns in the order they started."""
    roots = [s for s in spans if s.operation == "invoke_agent" and not s.parent_id]
    groups: dict[str, list[SpanRecord]] = {}
    if roots:
        keys = {root.trace_id: root for root in roots}
        for span in spans:
            if span.trace_id in keys:
                groups.setdefault(span.trace_id, []).append(span)
    else:
        for span in spans:
            groups.setdefault(span.trace_id, []).append(span)
    return sorted(groups.values(), key=lambda group: min(s.start_ns for s in group))


def turns_of(spans: Iterable[SpanRecord]) -> list[Turn]:
    """The turns ``spans`` tell (see the module), each with its events and answer."""
    turns = []
    for number, group in enumerate(_turn_roots(list(spans)), 1):
        started = min(s.start_ns for s in group)
        events = events_of(group, started)
        chats = sorted(
            (s for s in group if s.operation in CHAT_OPERATIONS), key=lambda s: s.start_ns
        )
        asked = _texts(chats[0].attributes.get("gen_ai.input.messages"), "user") if chats else []
        final = next(
            (str(s.attributes["final_result"]) for s in group if s.attributes.get("final_result")),
            None,
        )
        said = [e for e in events if isinstance(e, MessageEvent)]
        if final is None and said:
            final = said[-1].text
        if said and final is not None and said[-1].text == final:
            events.remove(said[-1])  # the answer, not something said on the way
        turns.append(
            Turn(
                invocation_id=f"turn-{number}",
                user_text=asked[-1] if asked else "",
                events=events,
                final_response=final,
            )
        )
    return turns
