"""The traces one object holds: its OTLP JSON documents (:mod:`.documents`), their spans
read by the OTLP reader ``eval-set add --from-session`` uses
(:func:`agentflow_eval.files.sessions.otlp.span_record`), grouped by trace id.

Every span is kept within :class:`~.bounds.Limits` and its attributes (and its resource's)
are redacted before anything reads them (:func:`agentflow_eval.redaction.
redact_named_data`: secret shapes, and values of attributes named like secrets). What
cannot be read is a :class:`TraceProblem` naming the object, the line and, where known,
the trace: a line that is not JSON or not a trace export, a span that is not a span.
Spans of one trace spread over the lines of one object are one trace; a trace whose
spans were exported in two objects is read as two (the Collector's ``groupbytrace``
processor keeps a trace's spans in one export).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentflow_eval.files.genai_spans import SpanRecord
from agentflow_eval.files.sessions.otlp import attributes_of, resource_spans, span_record
from agentflow_eval.redaction import redact, redact_named_data
from agentflow_eval.storage.base import ReadableStream
from agentflow_eval.traces.bounds import Limits, bounded
from agentflow_eval.traces.documents import Document, documents_of
from agentflow_eval.traces.problem import TraceProblem
from agentflow_eval.traces.sessions import RecordedSession, session_of

__all__ = ["RecordedTrace", "hex_id", "traces_in"]

_HEX_ID = re.compile(r"^[0-9a-fA-F]{16,32}$")


def hex_id(value: str) -> str:
    """A trace or span id as OTLP JSON writes it (lower-case hex), whether it came so or
    base64-encoded (protobuf's JSON mapping, which the SDK's encoder gives)."""
    if _HEX_ID.match(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex() if len(raw) in (8, 16) else value


@dataclass
class RecordedTrace:
    """One trace of an object: its spans (bounded, redacted) and where it was read."""

    trace_id: str
    key: str
    line: int
    spans: list[SpanRecord] = field(default_factory=list)
    cut: int = 0
    """Texts and nested values cut to the limits."""
    redacted: int = 0
    """Attributes whose values were redacted."""

    @property
    def local_roots(self) -> list[SpanRecord]:
        """The spans whose parent is not among the trace's (in start order): the trace's
        root, or the service's first span under a caller's (a remote parent)."""
        ids = {span.span_id for span in self.spans}
        found = [span for span in self.spans if not span.parent_id or span.parent_id not in ids]
        return sorted(found, key=lambda span: span.start_ns)

    @property
    def root(self) -> SpanRecord | None:
        """The trace's one local root, if it has one."""
        roots = self.local_roots
        return roots[0] if len(roots) == 1 else None

    def incomplete(self) -> str | None:
        """Why the trace is not whole, if it is not: spans whose parents are missing (the
        root lost, or exported apart), or a fragment under a parent it lacks that is not
        an agent's own first span."""
        roots = self.local_roots
        if len(roots) > 1:
            return (
                f"incomplete: {len(roots)} spans whose parent is missing (spans of the trace "
                "were lost or exported apart)"
            )
        root = roots[0] if roots else None
        if root is not None and root.parent_id and root.operation != "invoke_agent":
            return (
                f"incomplete: its first span {root.name!r} has a parent the trace lacks and "
                "is not an agent's (invoke_agent)"
            )
        return None

    @property
    def start_ns(self) -> int:
        return min((span.start_ns for span in self.spans), default=0)

    @property
    def end_ns(self) -> int:
        return max((span.end_ns for span in self.spans), default=0)

    def attribute(self, name: str) -> str | None:
        """``name``'s value as text: the root span's attribute, else its resource's, else
        the first span's (in start order) that has it."""
        root = self.root
        ordered = sorted(self.spans, key=lambda span: span.start_ns)
        places: list[Mapping[str, Any]] = []
        if root is not None:
            places += [root.attributes, root.resource]
        places += [span.attributes for span in ordered] + [span.resource for span in ordered]
        for attributes in places:
            value = attributes.get(name)
            if value is not None and value != "":
                return str(value)
        return None

    @property
    def named(self) -> str:
        """How messages name it: the object, the line and the trace id."""
        return f"{self.key}:{self.line} trace {self.trace_id}"


def traces_in(
    stream: ReadableStream, key: str, *, limits: Limits, max_bytes: int, modified_ns: int = 0
) -> Iterator[RecordedTrace | RecordedSession | TraceProblem]:
    """The traces of the object ``key`` read from ``stream``, in the order each first
    appears, then what could not be read of it. A document that is not an OTLP export but
    a conversation an agent kept (an ADK session, an OpenAI-style transcript) is a trace
    too (:mod:`.sessions`; ``modified_ns``, when the object was written, is its time
    where it says none)."""
    found: dict[str, RecordedTrace] = {}
    broken: dict[str, TraceProblem] = {}
    problems: list[TraceProblem] = []
    gzipped = key.lower().endswith(".gz")
    for item in documents_of(stream, gzipped=gzipped, max_bytes=max_bytes):
        if not isinstance(item, Document):
            problems.append(TraceProblem(key, item.line, item.reason))
            continue
        exports = resource_spans(item.value) if isinstance(item.value, dict) else None
        if not exports:
            kept = session_of(item.value, key, item.line, limits, modified_ns)
            if kept is not None:
                yield kept
                continue
            problems.append(
                TraceProblem(
                    key,
                    item.line,
                    'not an OTLP trace export (no "resourceSpans"), an ADK session or a '
                    "chat transcript",
                )
            )
            continue
        for resource in exports:
            _read_resource(resource, key, item.line, limits, found, broken, problems)
    for trace_id, trace in found.items():
        problem = broken.get(trace_id)
        if problem is None:
            yield trace
        else:
            yield problem
    yield from problems


def _read_resource(
    resource: Any,
    key: str,
    line: int,
    limits: Limits,
    found: dict[str, RecordedTrace],
    broken: dict[str, TraceProblem],
    problems: list[TraceProblem],
) -> None:
    if not isinstance(resource, dict):
        problems.append(TraceProblem(key, line, "a resourceSpans entry is not an object"))
        return
    try:
        kept = bounded(resource.get("resource") or {}, limits)
        emitted_by = redact_named_data(attributes_of(kept.value.get("attributes")))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        problems.append(TraceProblem(key, line, f"its resource is not OTLP ({_said(exc)})"))
        return
    scopes = resource.get("scopeSpans", resource.get("scope_spans")) or []
    for scope in scopes if isinstance(scopes, list) else [None]:
        spans = scope.get("spans") if isinstance(scope, dict) else None
        if not isinstance(spans, list):
            problems.append(TraceProblem(key, line, "a scopeSpans entry has no list of spans"))
            continue
        for span in spans:
            _read_span(span, emitted_by, kept.cuts, key, line, limits, found, broken, problems)


def _read_span(
    span: Any,
    emitted_by: dict[str, Any],
    resource_cuts: int,
    key: str,
    line: int,
    limits: Limits,
    found: dict[str, RecordedTrace],
    broken: dict[str, TraceProblem],
    problems: list[TraceProblem],
) -> None:
    raw_id = span.get("traceId") if isinstance(span, dict) else None
    if not isinstance(raw_id, str) or not raw_id:
        problems.append(TraceProblem(key, line, "a span has no traceId"))
        return
    trace_id = hex_id(raw_id)
    trace = found.get(trace_id)
    if trace is None:
        trace = found[trace_id] = RecordedTrace(trace_id, key, line)
        trace.cut += resource_cuts
    if trace_id in broken:
        return
    try:
        kept = bounded(span, limits)
        record = span_record(kept.value, emitted_by)
        attributes = dict(record.attributes)
        clean = redact_named_data(attributes)
    except (AttributeError, KeyError, TypeError, ValueError, RecursionError) as exc:
        broken[trace_id] = TraceProblem(key, line, f"a span is not OTLP ({_said(exc)})", trace_id)
        return
    trace.cut += kept.cuts
    trace.redacted += sum(clean[name] != value for name, value in attributes.items())
    trace.spans.append(
        SpanRecord(
            name=record.name,
            attributes=clean,
            start_ns=record.start_ns,
            end_ns=record.end_ns,
            trace_id=trace_id,
            span_id=hex_id(record.span_id) if record.span_id else "",
            parent_id=hex_id(record.parent_id) if record.parent_id else "",
            error=record.error,
            resource=emitted_by,
        )
    )


def _said(exc: BaseException) -> str:
    """An exception in a line, redacted: its text may quote a value of the trace."""
    text = redact(str(exc).splitlines()[0]) if str(exc) else ""
    return f"{type(exc).__name__}: {text}"[:200] if text else type(exc).__name__
