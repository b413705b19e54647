"""The OpenTelemetry SDK side of :mod:`agentflow_eval.agents.otel`: the span processor that
hands each span to the trial turn it belongs to, and where it is installed. Imported only
once something in the process has imported OpenTelemetry (it needs ``opentelemetry-sdk``:
``pip install 'agentflow-eval[otel]'``).

Where the processor goes:

- When the process already has an SDK tracer provider (the user's, logfire's: anything
  with ``add_span_processor``), the processor is added to it. Its spans keep going to the
  user's exporters too, and its sampler decides which spans exist.
- When no provider was set (the API's proxy), a :class:`TrialTracerProvider` becomes the
  global one. It records only the spans of trial turns (and their children): outside a
  turn its tracers hand out the API's no-op spans, exactly what the process had before, so
  nothing else in the process (Prefect's own run spans, a framework evaluated through its
  adapter) starts recording or propagating trace ids. Once anyone else adds a span
  processor to it, it records every span, as a plain SDK provider does.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import (  # type: ignore[import-not-found, unused-ignore]
    ReadableSpan,
    Span,
    SpanProcessor,
    TracerProvider,
)
from opentelemetry.util import types

from agentflow_eval.agents import otel

# The SDK is an optional extra: where mypy runs without it (the core install), its
# classes are Any, hence the ignores above and on the classes below.

try:  # how the API's own tracers make start_as_current_span usable as a decorator too
    from opentelemetry.util._decorator import _agnosticcontextmanager
except ImportError:  # pragma: no cover - older opentelemetry-api
    from contextlib import (  # type: ignore[assignment, unused-ignore]
        contextmanager as _agnosticcontextmanager,
    )

__all__ = ["TrialSpanProcessor", "TrialTracerProvider", "install_processor"]

_log = logging.getLogger(__name__)


class TrialSpanProcessor(SpanProcessor):  # type: ignore[misc, unused-ignore]
    """Routes spans to the trial turns they belong to (see :mod:`.otel`): a span started
    while a turn is current, or under a span of a turn, is collected by that turn when it
    ends; any other span is left alone at the cost of a dictionary look-up."""

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        parent = span.parent
        turn = otel.route((parent.trace_id, parent.span_id) if parent is not None else None)
        if turn is not None:
            context = span.get_span_context()
            turn.claim((context.trace_id, context.span_id))

    def on_end(self, span: ReadableSpan) -> None:
        context = span.context
        if context is None:
            return
        turn = otel.turn_of((context.trace_id, context.span_id))
        if turn is not None:
            turn.collect(span)


_PROCESSOR = TrialSpanProcessor()
_NOOP = trace.NoOpTracer()


class TrialTracerProvider(TracerProvider):  # type: ignore[misc, unused-ignore]
    """The global provider installed when the process had none: it records the spans of
    trial turns only, until someone else adds a span processor (then every span)."""

    def __init__(self) -> None:
        super().__init__(shutdown_on_exit=False)
        self.only_trials = True
        super().add_span_processor(_PROCESSOR)

    def add_span_processor(self, span_processor: SpanProcessor) -> None:
        """Someone else wants spans too: from now on every span is recorded."""
        self.only_trials = False
        super().add_span_processor(span_processor)

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: types.Attributes | None = None,
    ) -> trace.Tracer:
        recording = super().get_tracer(
            instrumenting_module_name, instrumenting_library_version, schema_url, attributes
        )
        return _TrialTracer(self, recording)


class _TrialTracer(trace.Tracer):
    """An SDK tracer inside trial turns, the API's no-op tracer elsewhere."""

    def __init__(self, provider: TrialTracerProvider, recording: trace.Tracer) -> None:
        self._provider = provider
        self._recording = recording

    def _tracer(self, context: Context | None) -> trace.Tracer:
        if not self._provider.only_trials or _in_turn(context):
            return self._recording
        return _NOOP

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: trace.SpanKind = trace.SpanKind.INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[trace.Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> trace.Span:
        return self._tracer(context).start_span(
            name,
            context,
            kind,
            attributes,
            links,
            start_time,
            record_exception,
            set_status_on_exception,
        )

    @_agnosticcontextmanager
    def start_as_current_span(
        self,
        name: str,
        context: Context | None = None,
        kind: trace.SpanKind = trace.SpanKind.INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[trace.Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> Iterator[trace.Span]:
        with self._tracer(context).start_as_current_span(
            name,
            context,
            kind,
            attributes,
            links,
            start_time,
            record_exception,
            set_status_on_exception,
            end_on_exit,
        ) as span:
            yield span


def _in_turn(context: Context | None) -> bool:
    """Whether a span starting here belongs to a trial turn: one is current, or the
    parent span is one of a turn's."""
    if otel.current_turn() is not None:
        return True
    parent = trace.get_current_span(context).get_span_context()
    return parent.is_valid and otel.turn_of((parent.trace_id, parent.span_id)) is not None


_served: list[Any] = []
"""The providers the processor was added to (compared by identity)."""
_lock = threading.Lock()


def install_processor(provider: Any = None) -> bool:
    """Add the processor to ``provider``, or to the global provider (installing a
    :class:`TrialTracerProvider` as the global one when none was set); returns whether
    spans will be read from it (not from a provider without ``add_span_processor``)."""
    with _lock:
        if provider is None:
            provider = trace.get_tracer_provider()
            if isinstance(provider, trace.ProxyTracerProvider):
                ours = TrialTracerProvider()
                trace.set_tracer_provider(ours)
                provider = trace.get_tracer_provider()  # another thread may have won
                if provider is ours:
                    _served.append(ours)
                    return True
        if any(served is provider for served in _served):
            return True
        add = getattr(provider, "add_span_processor", None)
        if not callable(add):
            _log.warning(
                "OpenTelemetry spans are not read: the tracer provider %s takes no span "
                "processor (use the SDK's TracerProvider)",
                type(provider).__name__,
            )
            return False
        add(_PROCESSOR)
        _served.append(provider)
        return True
