"""An OpenTelemetry trace export in OTLP JSON (``{"resourceSpans": [...]}``, what an
OTLP/JSON file exporter or a collector's file exporter writes) as a conversation: its
spans read by the generative-AI conventions (:mod:`agentflow_eval.files.genai_spans`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentflow_eval.files.genai_spans import SpanRecord, turns_of
from agentflow_eval.files.sessions import Conversation, SessionSourceError

__all__ = ["attributes_of", "read", "recognises", "resource_spans", "span_record", "spans_of"]

_ERROR = 2
"""OTLP's ``STATUS_CODE_ERROR``."""


def recognises(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(
        document.get("resourceSpans", document.get("resource_spans")), list
    )


def _value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain value."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return {kv["key"]: _value(kv.get("value")) for kv in value["kvlistValue"].get("values", [])}
    return None


def _error(span: dict[str, Any]) -> str | None:
    status = span.get("status") or {}
    code = status.get("code")
    if code not in (_ERROR, "STATUS_CODE_ERROR"):
        return None
    if status.get("message"):
        return str(status["message"])
    for event in span.get("events") or []:
        if event.get("name") == "exception":
            attrs = {a["key"]: _value(a.get("value")) for a in event.get("attributes") or []}
            kind, message = attrs.get("exception.type"), attrs.get("exception.message")
            if message:
                return f"{kind}: {message}" if kind else str(message)
    return "error"


def attributes_of(attributes: Any) -> dict[str, Any]:
    """OTLP ``attributes`` (a list of ``{"key", "value"}``) as a plain mapping."""
    return {a["key"]: _value(a.get("value")) for a in attributes or []}


def resource_spans(document: dict[str, Any]) -> list[Any]:
    """The export's ``resourceSpans`` (either spelling)."""
    found = document.get("resourceSpans", document.get("resource_spans"))
    return found if isinstance(found, list) else []


def span_record(span: dict[str, Any], resource: Mapping[str, Any]) -> SpanRecord:
    """One OTLP span, emitted by the resource whose attributes are ``resource``."""
    return SpanRecord(
        name=str(span.get("name") or ""),
        attributes=attributes_of(span.get("attributes")),
        start_ns=int(span.get("startTimeUnixNano") or 0),
        end_ns=int(span.get("endTimeUnixNano") or 0),
        trace_id=str(span.get("traceId") or ""),
        span_id=str(span.get("spanId") or ""),
        parent_id=str(span.get("parentSpanId") or ""),
        error=_error(span),
        resource=resource,
    )


def spans_of(document: dict[str, Any]) -> list[SpanRecord]:
    """Every span of the export."""
    spans = []
    for resource in resource_spans(document):
        emitted_by = attributes_of((resource.get("resource") or {}).get("attributes"))
        for scope in resource.get("scopeSpans", resource.get("scope_spans")) or []:
            for span in scope.get("spans") or []:
                spans.append(span_record(span, emitted_by))
    return spans


def read(document: Any, source: str) -> Conversation:
    spans = spans_of(document)
    turns = turns_of(spans)
    if not turns or not any(turn.user_text for turn in turns):
        raise SessionSourceError(
            f"{source}: no agent turn in the trace export: expected spans with "
            "gen_ai.operation.name (invoke_agent, chat, execute_tool)"
        )
    return Conversation(turns=turns, source=source)
