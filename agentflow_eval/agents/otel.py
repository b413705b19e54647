"""An agent's trajectory read from its own OpenTelemetry spans: for agents whose framework
emits GenAI spans (Pydantic AI's instrumentation, OpenInference or OpenLLMetry
instrumentors, or spans written by hand), so they need neither an adapter nor recorder
calls.

While a turn of a :class:`~agentflow_eval.agents.python.PythonAgent` runs, a
:class:`TurnCapture` is the current one (a context variable: it follows the turn into the
asyncio tasks and threads that copy its context). A span processor on the process's SDK
tracer provider (:mod:`agentflow_eval.agents.otel_sdk`) hands each span started there, or
under a span that was, to that capture; the turn's finished spans then become its events
(:func:`events_from_spans`): model calls with their usage, tool calls with their
arguments, results and errors, agent runs as node visits, and text said beside tool calls.
A kind of event the agent recorded itself through the recorder is not taken from its
spans, so nothing is counted twice.

Nothing here imports OpenTelemetry: the capture starts only once something in the process
has imported the OpenTelemetry API (an instrumented framework does), and then costs a few
microseconds a turn when no span is emitted. The span attributes read are listed in
``docs/frameworks/otel.md``.
"""

from __future__ import annotations

import contextvars
import importlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from agentflow_eval.agents.base import TrajectoryRecorder
from agentflow_eval.llm import litellm_compat
from agentflow_eval.models.results import (
    MessageEvent,
    ModelCallEvent,
    NodeEvent,
    RecordedToolCall,
    ToolCallEvent,
    TrajectoryEvent,
    Usage,
)

__all__ = [
    "SpanLike",
    "TurnCapture",
    "capture_turn",
    "events_from_spans",
    "install",
]

_log = logging.getLogger(__name__)

_OTEL_API = "opentelemetry.trace"
"""The module an instrumented framework imports to emit spans: until it is loaded, no span
can exist, and nothing is set up."""

_SDK_SIDE = "agentflow_eval.agents.otel_sdk"
"""The module that needs ``opentelemetry-sdk`` (the span processor and where it goes),
imported only once spans can exist."""

SpanKey = tuple[int, int]
"""A span's ``(trace_id, span_id)``."""


class _SpanContextLike(Protocol):
    @property
    def trace_id(self) -> int: ...

    @property
    def span_id(self) -> int: ...


class _StatusLike(Protocol):
    @property
    def status_code(self) -> Any: ...

    @property
    def description(self) -> str | None: ...


class _EventLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def attributes(self) -> Mapping[str, Any] | None: ...


class SpanLike(Protocol):
    """What is read of a finished span (an SDK ``ReadableSpan``)."""

    @property
    def name(self) -> str: ...

    @property
    def context(self) -> _SpanContextLike | None: ...

    @property
    def parent(self) -> _SpanContextLike | None: ...

    @property
    def attributes(self) -> Mapping[str, Any] | None: ...

    @property
    def start_time(self) -> int | None: ...

    @property
    def end_time(self) -> int | None: ...

    @property
    def status(self) -> _StatusLike: ...

    @property
    def events(self) -> Sequence[_EventLike]: ...


# -- routing: which turn a span belongs to ---------------------------------------------

_current: contextvars.ContextVar[TurnCapture | None] = contextvars.ContextVar(
    "agentflow_eval_otel_turn", default=None
)
_routes: dict[SpanKey, TurnCapture] = {}
"""The open turns' spans (started, finished or not), by ``(trace_id, span_id)``: a span
started where the turn's context variable is not set (a thread that did not copy the
context but attached the OpenTelemetry context) belongs to the turn of its parent."""


class TurnCapture:
    """The spans of one turn of one trial. Made current by :func:`capture_turn`;
    :meth:`finish` ends it and adds what the spans say to the turn's recorder."""

    __slots__ = ("_lock", "_offset_ms", "_recorder", "_start_ns", "_token", "keys", "open", "spans")

    def __init__(self, recorder: TrajectoryRecorder) -> None:
        self._recorder = recorder
        self._start_ns = time.time_ns()  # span times are epoch nanoseconds
        self._offset_ms = recorder.elapsed_ms()
        self._lock = threading.Lock()
        self.spans: list[SpanLike] = []
        self.keys: list[SpanKey] = []
        self.open = True
        self._token = _current.set(self)

    def claim(self, key: SpanKey) -> None:
        """A span started in this turn (called by the span processor, from any thread)."""
        with self._lock:
            if self.open:
                self.keys.append(key)
                _routes[key] = self

    def collect(self, span: SpanLike) -> None:
        """A span of this turn finished."""
        with self._lock:
            if self.open:
                self.spans.append(span)

    def finish(self) -> list[TrajectoryEvent]:
        """End the turn's capture (in the context it started in) and add the span-derived
        events of the kinds the agent did not record itself; returns those added."""
        _current.reset(self._token)
        with self._lock:
            self.open = False
            keys, self.keys = self.keys, []
            spans, self.spans = self.spans, []
        for key in keys:
            _routes.pop(key, None)
        if not spans:
            return []
        recorded = {event.kind for event in self._recorder.events}
        found = events_from_spans(spans, start_ns=self._start_ns, offset_ms=self._offset_ms)
        events = [event for event in found if event.kind not in recorded]
        self._recorder.merge(events)
        return events


def current_turn() -> TurnCapture | None:
    """The open turn of the code running here, if any."""
    turn = _current.get()
    return turn if turn is not None and turn.open else None


def route(parent: SpanKey | None) -> TurnCapture | None:
    """The turn a span starting here belongs to: the current one, else its parent's."""
    turn = current_turn()
    if turn is None and parent is not None:
        turn = _routes.get(parent)
    return turn


def turn_of(key: SpanKey) -> TurnCapture | None:
    """The turn a started span was claimed by."""
    return _routes.get(key)


# -- setup -------------------------------------------------------------------------------

_Setup = Literal["pending", "ready", "off"]
_setup: _Setup = "pending"
_setup_lock = threading.Lock()


def capture_turn(recorder: TrajectoryRecorder) -> TurnCapture | None:
    """Start capturing the spans of the turn ``recorder`` records, or ``None`` when no span
    can be read here: nothing has imported OpenTelemetry yet, ``opentelemetry-sdk`` is not
    installed, ``OTEL_SDK_DISABLED`` is set, or the global tracer provider takes no span
    processor. Call :meth:`TurnCapture.finish` in the same context when the turn ends."""
    if _setup != "ready" and not _ready():
        return None
    return TurnCapture(recorder)


def _ready() -> bool:
    global _setup
    if _setup == "off" or _OTEL_API not in sys.modules:
        return False
    with _setup_lock:
        if _setup == "pending":
            _setup = "ready" if _install_global() else "off"
    return _setup == "ready"


def _install_global() -> bool:
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    try:
        sdk = importlib.import_module(_SDK_SIDE)
    except ImportError as exc:
        _log.debug("OpenTelemetry spans are not read: %s (pip install 'agentflow-eval[otel]')", exc)
        return False
    installed: bool = sdk.install_processor(None)
    return installed


def install(provider: Any = None) -> bool:
    """Read spans from ``provider`` too (an SDK ``TracerProvider`` an agent was given
    explicitly rather than the global one), or set up the global one now; returns whether
    spans will be read from it. Needs ``opentelemetry-sdk``."""
    global _setup
    sdk = importlib.import_module(_SDK_SIDE)  # raises ImportError without the SDK
    installed: bool = sdk.install_processor(provider)
    if provider is None:
        with _setup_lock:
            _setup = "ready" if installed else "off"
    return installed


# -- spans to events ---------------------------------------------------------------------

_Kind = Literal["model", "tool", "agent"]

_MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
_AGENT_OPERATIONS = frozenset({"invoke_agent", "invoke_workflow"})
_NAME_PREFIXES: tuple[tuple[str, _Kind], ...] = (
    ("chat ", "model"),
    ("text_completion ", "model"),
    ("generate_content ", "model"),
    ("execute_tool ", "tool"),
    ("invoke_agent ", "agent"),
    ("invoke_workflow ", "agent"),
)
_OPENINFERENCE_KINDS: dict[str, _Kind] = {"LLM": "model", "TOOL": "tool", "AGENT": "agent"}
_TRACELOOP_KINDS: dict[str, _Kind] = {"tool": "tool", "agent": "agent"}
_TRACELOOP_LLM_TYPES = frozenset({"chat", "completion"})

# attribute spellings, the GenAI semantic conventions first
_AGENT_NAME = ("gen_ai.agent.name", "gen_ai.workflow.name", "agent.name", "traceloop.entity.name")
_ACTING_AGENT = ("gen_ai.agent.name", "agent.name")
"""Who made a model or tool call, when its span says (else its enclosing agent span)."""
_TOOL_NAME = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
_TOOL_ARGS = ("gen_ai.tool.call.arguments", "input.value", "traceloop.entity.input")
_TOOL_RESULT = ("gen_ai.tool.call.result", "output.value", "traceloop.entity.output")
_TOOL_ID = ("gen_ai.tool.call.id", "tool_call.id")
_MODEL = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
"""The model that answered first (the name a reply gives, which is what it is priced as
and how a stand-in model says it stood in), else the one asked for."""
_PROVIDER = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
_INPUT_TOKENS = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
)
_OUTPUT_TOKENS = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
)
_OUTPUT_MESSAGES = "gen_ai.output.messages"


@dataclass(frozen=True)
class _Node:
    """A span as the conversion sees it."""

    span: SpanLike
    key: SpanKey | None
    parent: SpanKey | None
    attrs: Mapping[str, Any]
    kind: _Kind | None
    start_ns: int
    end_ns: int

    @property
    def duration_ms(self) -> float:
        return max(0.0, (self.end_ns - self.start_ns) / 1e6)


def events_from_spans(
    spans: Iterable[SpanLike], *, start_ns: int, offset_ms: float = 0.0
) -> list[TrajectoryEvent]:
    """The events the GenAI spans among ``spans`` describe, ordered by when each began
    (``at_ms``: milliseconds since ``start_ns``, plus ``offset_ms``). A model-call span
    inside another (an instrumented client under an instrumented framework) and a tool
    span directly inside one of the same tool count once; a model-call span that failed
    without reporting usage is not a call made; other spans are skipped."""
    nodes = [_node(span) for span in spans]
    by_key = {node.key: node for node in nodes if node.key is not None}
    events: list[TrajectoryEvent] = []
    for node in sorted(nodes, key=lambda n: n.start_ns):
        if node.kind is None:
            continue
        ancestors = _ancestors(node, by_key)
        if _duplicate(node, ancestors):
            continue
        agents = [_agent_name(a) for a in reversed(ancestors) if a.kind == "agent"]
        at_ms = offset_ms + max(0.0, (node.start_ns - start_ns) / 1e6)
        author = _text(node.attrs, _ACTING_AGENT) or (agents[-1] if agents else None)
        if node.kind == "agent":
            name = _agent_name(node)
            events.append(NodeEvent(name=name, path=agents, author=name, at_ms=at_ms))
        elif node.kind == "tool":
            events.append(ToolCallEvent(call=_tool_call(node), author=author, at_ms=at_ms))
        else:
            call = _model_call(node, author, at_ms)
            if not call.usage.total_tokens and _error(node.span) is not None:
                continue  # a request that failed (a 429, say) is not a model call made
            events.append(call)
            said = _text_beside_tool_calls(node.attrs)
            if said:
                end_ms = offset_ms + max(0.0, (node.end_ns - start_ns) / 1e6)
                events.append(MessageEvent(text=said, author=author, at_ms=end_ms))
    events.sort(key=lambda event: event.at_ms)
    return events


def _node(span: SpanLike) -> _Node:
    attrs: Mapping[str, Any] = span.attributes or {}
    context, parent = span.context, span.parent
    start = span.start_time or 0
    return _Node(
        span=span,
        key=(context.trace_id, context.span_id) if context is not None else None,
        parent=(parent.trace_id, parent.span_id) if parent is not None else None,
        attrs=attrs,
        kind=_kind(span.name, attrs),
        start_ns=start,
        end_ns=span.end_time or start,
    )


def _kind(name: str, attrs: Mapping[str, Any]) -> _Kind | None:
    operation = attrs.get("gen_ai.operation.name")
    if operation is not None:
        if operation in _MODEL_OPERATIONS:
            return "model"
        if operation == "execute_tool":
            return "tool"
        return "agent" if operation in _AGENT_OPERATIONS else None
    openinference = attrs.get("openinference.span.kind")
    if isinstance(openinference, str):
        return _OPENINFERENCE_KINDS.get(openinference.upper())
    traceloop = attrs.get("traceloop.span.kind")
    if isinstance(traceloop, str):
        return _TRACELOOP_KINDS.get(traceloop)
    if attrs.get("llm.request.type") in _TRACELOOP_LLM_TYPES:
        return "model"
    if any(key.startswith("gen_ai.") for key in attrs):
        for prefix, kind in _NAME_PREFIXES:
            if name.startswith(prefix):
                return kind
    return None


def _ancestors(node: _Node, by_key: Mapping[SpanKey, _Node]) -> list[_Node]:
    """The node's enclosing spans among the turn's, innermost first."""
    out: list[_Node] = []
    seen: set[SpanKey] = set()
    parent = node.parent
    while parent is not None and parent not in seen:
        seen.add(parent)
        found = by_key.get(parent)
        if found is None:
            break
        out.append(found)
        parent = found.parent
    return out


def _duplicate(node: _Node, ancestors: Sequence[_Node]) -> bool:
    if node.kind == "model":
        return any(a.kind == "model" for a in ancestors)
    if node.kind == "tool":
        nearest = next((a for a in ancestors if a.kind is not None), None)
        return (
            nearest is not None
            and nearest.kind == "tool"
            and _text(nearest.attrs, _TOOL_NAME) == _text(node.attrs, _TOOL_NAME)
        )
    return False


def _agent_name(node: _Node) -> str:
    return _text(node.attrs, _AGENT_NAME) or _strip_prefix(node.span.name)


def _strip_prefix(name: str) -> str:
    for prefix, _ in _NAME_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def _tool_call(node: _Node) -> RecordedToolCall:
    attrs = node.attrs
    return RecordedToolCall(
        name=_text(attrs, _TOOL_NAME) or _strip_prefix(node.span.name),
        args=_arguments(_first(attrs, _TOOL_ARGS)),
        result=_json_value(_first(attrs, _TOOL_RESULT)),
        error=_error(node.span),
        duration_ms=node.duration_ms,
        id=_text(attrs, _TOOL_ID),
    )


def _model_call(node: _Node, author: str | None, at_ms: float) -> ModelCallEvent:
    attrs = node.attrs
    model = _text(attrs, _MODEL)
    prompt = _int(_first(attrs, _INPUT_TOKENS))
    completion = _int(_first(attrs, _OUTPUT_TOKENS))
    return ModelCallEvent(
        model=model,
        usage=Usage.of_call(
            prompt,
            completion,
            litellm_compat.listed_cost(model, _text(attrs, _PROVIDER), prompt, completion),
        ),
        latency_ms=node.duration_ms,
        author=author,
        at_ms=at_ms,
    )


def _error(span: SpanLike) -> str | None:
    """A failed span's error as the recorder words one (``Type: message``)."""
    if getattr(span.status.status_code, "name", None) != "ERROR":
        return None
    for event in span.events:
        if event.name == "exception":
            attrs = event.attributes or {}
            kind = str(attrs.get("exception.type") or "").rsplit(".", 1)[-1]
            message = str(attrs.get("exception.message") or "")
            if kind or message:
                return f"{kind}: {message}" if kind and message else kind or message
    attrs = span.attributes or {}
    return span.status.description or _text(attrs, ("error.type",)) or "error"


def _text_beside_tool_calls(attrs: Mapping[str, Any]) -> str | None:
    """What a model said in a reply that also called tools (``gen_ai.output.messages``):
    an intermediate response. A reply without tool calls is the answer, not recorded here."""
    raw = attrs.get(_OUTPUT_MESSAGES)
    if not isinstance(raw, str) or '"tool_call"' not in raw:
        return None
    messages = _json_value(raw)
    if not isinstance(messages, list):
        return None
    texts: list[str] = []
    for message in messages:
        parts = message.get("parts") if isinstance(message, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict) and part.get("type") == "text":
                content = part.get("content")
                if isinstance(content, str) and content.strip():
                    texts.append(content)
    return "\n".join(texts) or None


def _arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments as a dict: a JSON object as it is; OpenLLMetry's
    ``{"args": [], "kwargs": {...}}`` as its keyword arguments; anything else under
    ``"input"``."""
    if raw is None:
        return {}
    value = _json_value(raw)
    if isinstance(value, dict):
        keywords = value.get("kwargs")
        if set(value) == {"args", "kwargs"} and isinstance(keywords, dict) and not value["args"]:
            return dict(keywords)
        return value
    return {"input": value}


def _json_value(raw: Any) -> Any:
    """A JSON text decoded; any other value (or text that is not JSON) as it is."""
    if isinstance(raw, str):
        text = raw.strip()
        if text[:1] in ("{", "[", '"') or text in ("true", "false", "null"):
            try:
                return json.loads(text)
            except ValueError:
                return raw
        return raw
    if isinstance(raw, tuple):
        return list(raw)
    return raw


def _first(attrs: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


def _text(attrs: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    value = _first(attrs, keys)
    return str(value) if value is not None else None


def _int(value: Any) -> int:
    try:
        return int(value) if value is not None else 0
    except (TypeError, ValueError):
        return 0
