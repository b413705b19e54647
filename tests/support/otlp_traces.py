"""Production traces for tests, as the OpenTelemetry Collector writes them: OTLP JSON
(hex ids, ``AnyValue`` attributes, nanosecond times as strings) of an agent instrumented
by the generative-AI conventions — an ``invoke_agent`` root, a ``chat`` span with the
user's message and usage, optionally an ``execute_tool`` span and a second ``chat`` span
with the answer — and the two layouts: the file exporter's JSON lines and the S3
exporter's minute partitions."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "AgentTrace",
    "any_value",
    "export_request",
    "s3_exporter_key",
    "write_file_exporter",
    "write_s3_layout",
]

BASE_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z


def any_value(value: Any) -> dict[str, Any]:
    """``value`` as OTLP JSON's ``AnyValue``."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": attributes(value)}}
    return {"stringValue": str(value)}


def attributes(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": any_value(value)} for key, value in values.items()]


def _id(seed: str, size: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[: size * 2]


@dataclass
class AgentTrace:
    """One agent turn, traced."""

    name: str
    """A seed for its ids (unique per trace)."""
    question: str = "What's the weather in Paris?"
    answer: str = "It is sunny in Paris."
    version: str | None = "1.0"
    service: str = "weather-agent"
    tool: str | None = "get_weather"
    tool_args: dict[str, Any] = field(default_factory=lambda: {"city": "Paris"})
    tool_result: Any = field(default_factory=lambda: {"weather": "sunny"})
    tool_error: str | None = None
    error: str | None = None
    """The root span's status message (the agent failed)."""
    root_attributes: dict[str, Any] = field(default_factory=dict)
    resource_attributes: dict[str, Any] = field(default_factory=dict)
    start_ns: int = BASE_NS
    input_tokens: int = 40
    output_tokens: int = 12

    @property
    def trace_id(self) -> str:
        return _id(self.name, 16)

    def resource(self) -> dict[str, Any]:
        values: dict[str, Any] = {"service.name": self.service}
        if self.version is not None:
            values["service.version"] = self.version
        values.update(self.resource_attributes)
        return values

    def spans(self) -> list[dict[str, Any]]:
        trace_id, root_id = self.trace_id, _id(self.name + "/root", 8)
        t = self.start_ns
        spans = [
            self._span(
                root_id,
                "",
                "invoke_agent weather",
                t,
                t + 900_000_000,
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "weather",
                    **self.root_attributes,
                },
                error=self.error,
            ),
            self._span(
                _id(self.name + "/chat1", 8),
                root_id,
                "chat gpt",
                t + 10_000_000,
                t + 300_000_000,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-test",
                    "gen_ai.usage.input_tokens": self.input_tokens,
                    "gen_ai.usage.output_tokens": self.output_tokens,
                    "gen_ai.input.messages": json.dumps(
                        [{"role": "user", "parts": [{"type": "text", "content": self.question}]}]
                    ),
                    **({} if self.tool else self._answer()),
                },
            ),
        ]
        if self.tool:
            tool_attributes: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": self.tool,
                "gen_ai.tool.call.arguments": json.dumps(self.tool_args),
            }
            if self.tool_error is None:
                tool_attributes["gen_ai.tool.call.result"] = json.dumps(self.tool_result)
            spans.append(
                self._span(
                    _id(self.name + "/tool", 8),
                    root_id,
                    f"execute_tool {self.tool}",
                    t + 310_000_000,
                    t + 400_000_000,
                    tool_attributes,
                    error=self.tool_error,
                )
            )
            spans.append(
                self._span(
                    _id(self.name + "/chat2", 8),
                    root_id,
                    "chat gpt",
                    t + 410_000_000,
                    t + 800_000_000,
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": "gpt-test",
                        "gen_ai.usage.input_tokens": self.input_tokens,
                        "gen_ai.usage.output_tokens": self.output_tokens,
                        **self._answer(),
                    },
                )
            )
        for span in spans:
            span["traceId"] = trace_id
        return spans

    def _answer(self) -> dict[str, Any]:
        return {
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": self.answer}]}]
            )
        }

    @staticmethod
    def _span(
        span_id: str,
        parent: str,
        name: str,
        start: int,
        end: int,
        values: Mapping[str, Any],
        *,
        error: str | None = None,
    ) -> dict[str, Any]:
        span: dict[str, Any] = {
            "spanId": span_id,
            "parentSpanId": parent,
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(end),
            "attributes": attributes(values),
            "status": {},
        }
        if error is not None:
            span["status"] = {"code": 2, "message": error}
        return span


def export_request(traces: Iterable[AgentTrace]) -> dict[str, Any]:
    """One ``ExportTraceServiceRequest`` holding ``traces`` (a ``resourceSpans`` entry per
    trace, as a collector batching several services writes them)."""
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attributes(trace.resource())},
                "scopeSpans": [
                    {"scope": {"name": "weather-agent", "version": "1"}, "spans": trace.spans()}
                ],
            }
            for trace in traces
        ]
    }


def s3_exporter_key(when: datetime, name: str, *, prefix: str = "", gzipped: bool = False) -> str:
    """Where the Collector's S3 exporter puts an object exported at ``when``
    (``s3_partition_format`` ``year=%Y/month=%m/day=%d/hour=%H/minute=%M``, ``otlp_json``)."""
    when = when.astimezone(UTC)
    partition = when.strftime("year=%Y/month=%m/day=%d/hour=%H/minute=%M")
    suffix = ".json.gz" if gzipped else ".json"
    return f"{prefix}{partition}/traces_{name}{suffix}"


def write_s3_layout(
    root: Path,
    requests: Iterable[dict[str, Any]],
    *,
    when: datetime | None = None,
    gzipped: bool = False,
    start: int = 0,
) -> list[str]:
    """Each request as an object of the S3 exporter's layout under the folder ``root``;
    the keys written."""
    moment = when or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    keys = []
    for number, request in enumerate(requests, start):
        key = s3_exporter_key(moment, f"{number:06d}", gzipped=gzipped)
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps(request).encode()
        path.write_bytes(gzip.compress(body) if gzipped else body)
        keys.append(key)
    return keys


def write_file_exporter(path: Path, requests: Iterable[dict[str, Any]]) -> Path:
    """The requests as the file exporter writes them: one a line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        for request in requests:
            handle.write(json.dumps(request) + "\n")
    return path
