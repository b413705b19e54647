"""An OpenTelemetry SDK span exporter that writes what an OpenTelemetry Collector with the
``groupbytrace`` processor and the S3 exporter (``marshaler: otlp_json``) writes: each
trace, once its root span ends, as one ``ExportTraceServiceRequest`` encoded by the SDK's
own OTLP encoder, in OTLP JSON (hex ids, as the Collector's JSON marshaler writes them),
at ``year=/month=/day=/hour=/minute=/traces_<random id>.json`` under a folder: as the
exporter names its objects, two exporters (two agent processes, or one restarted) writing
in the same minute never write the same key."""

from __future__ import annotations

import base64
import json
import secrets
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from tests.support.otlp_traces import s3_exporter_key

__all__ = ["CollectorLayoutExporter"]

_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(node: Any) -> Any:
    """Protobuf's JSON mapping writes bytes as base64; OTLP JSON (and the Collector)
    writes trace and span ids as hex."""
    if isinstance(node, dict):
        return {
            key: base64.b64decode(value).hex() if key in _ID_KEYS and value else _hex_ids(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(item) for item in node]
    return node


class CollectorLayoutExporter(SpanExporter):
    """Spans grouped by trace; a trace written when its root span ends (see the module)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.written: list[Path] = []
        self._pending: dict[int, list[ReadableSpan]] = {}
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            for span in spans:
                assert span.context is not None
                self._pending.setdefault(span.context.trace_id, []).append(span)
                if span.parent is None:
                    self._write(self._pending.pop(span.context.trace_id))
        return SpanExportResult.SUCCESS

    def _write(self, spans: list[ReadableSpan]) -> None:
        document = _hex_ids(MessageToDict(encode_spans(spans)))
        key = s3_exporter_key(datetime.now(UTC), str(secrets.randbits(63)))
        path = self.root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document))
        self.written.append(path)

    def shutdown(self) -> None:
        pass
