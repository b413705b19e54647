"""Traces read from where the OpenTelemetry Collector writes them: the S3 exporter's
minute partitions (an object per export, gzipped or not) and the file exporter's JSON
lines (rotated into timestamped files), each trace a trial of its implicit case, each
agent version scored in a run of its own with the version and the traces' window in its
results."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path

from agentflow_eval.files.results_json import read_results_json
from tests.support.otlp_traces import (
    AgentTrace,
    export_request,
    write_file_exporter,
    write_s3_layout,
)
from tests.unit.traces.conftest import ROOT, Score, scored_trace_ids, trial_lines


def test_the_s3_exporters_objects_are_scored_a_run_per_agent_version(
    tmp_path: Path, score: Score
) -> None:
    source = tmp_path / "bucket"
    traces = [
        AgentTrace(
            f"t{n}",
            version="1.0" if n % 2 else "2.0",
            start_ns=AgentTrace("x").start_ns + n * 60_000_000_000,
            tool=None if n < 2 else "get_weather",
        )
        for n in range(6)
    ]
    write_s3_layout(source, [export_request(traces[:2]), export_request(traces[2:4])])
    write_s3_layout(source, [export_request(traces[4:])], gzipped=True, start=2)

    outcome = score(source, tmp_path / "out")

    assert outcome.intake.counts.objects_read == 3
    assert outcome.intake.counts.traces == 6 and outcome.intake.counts.problems == 0
    versions = {v.recording.agent_version: v for v in outcome.versions}
    assert set(versions) == {"1.0", "2.0"}
    for version, scored in versions.items():
        run = read_results_json(scored.outcome.run_dir / "results.json")
        mine = [t for t in traces if t.version == version]
        assert run.agent_version == version and run.agent == "weather-agent"
        assert run.totals.trials == 3
        assert {case.case_id for case in run.cases} == {t.trace_id for t in mine}
        start = datetime.fromtimestamp(min(t.start_ns for t in mine) / 1e9, UTC)
        assert datetime.fromisoformat(run.labels["window_start"]) == start
        assert datetime.fromisoformat(run.labels["window_end"]) > start
        assert run.labels["share_scored"] == "1.0000" and run.labels["traces_seen"] == "3"
        assert any("production traces of weather-agent" in note for note in run.notes)
    judged = {line["trial"]["case_id"]: line for line in trial_lines(outcome)}
    with_tool = judged[traces[4].trace_id]["trial"]["turns"][0]
    assert with_tool["user_text"] == "What's the weather in Paris?"
    assert with_tool["final_response"] == "It is sunny in Paris."
    calls = [e["call"] for e in with_tool["events"] if e["kind"] == "tool_call"]
    assert calls == [
        {
            **calls[0],
            "name": "get_weather",
            "args": {"city": "Paris"},
            "result": {"weather": "sunny"},
        }
    ]
    assert judged[traces[4].trace_id]["status"] == "failed"  # it called a tool
    assert judged[traces[0].trace_id]["status"] == "passed"


def test_the_file_exporters_lines_are_read_and_its_file_being_written_is_left_alone(
    tmp_path: Path, score: Score
) -> None:
    folder = tmp_path / "otel"
    one, two, three = (AgentTrace(name, tool=None) for name in ("a", "b", "c"))
    split = export_request([one])
    spans = split["resourceSpans"][0]["scopeSpans"][0]["spans"]
    first_half = {
        "resourceSpans": [{**split["resourceSpans"][0], "scopeSpans": [{"spans": spans[:1]}]}]
    }
    second_half = {
        "resourceSpans": [{**split["resourceSpans"][0], "scopeSpans": [{"spans": spans[1:]}]}]
    }
    write_file_exporter(
        folder / "traces-2026-01-01T12-00-00.000.json",
        [first_half, export_request([two]), second_half],
    )
    write_file_exporter(folder / "traces.json", [export_request([three])])  # being written

    outcome = score(folder, tmp_path / "out", include=["traces-*.json"])

    assert outcome.intake.counts.objects_read == 1
    assert sorted(scored_trace_ids(outcome)) == sorted([one.trace_id, two.trace_id])
    judged = {line["trial"]["case_id"]: line for line in trial_lines(outcome)}
    assert judged[one.trace_id]["trial"]["turns"][0]["final_response"] == one.answer


def test_an_sdk_export_with_base64_ids_and_indentation_reads_as_hex_trace_ids(
    tmp_path: Path, score: Score
) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    fixture = ROOT / "tests/fixtures/otlp/weather_trace.otlp.json"
    (folder / "weather.json").write_bytes(fixture.read_bytes())  # pretty-printed

    outcome = score(folder, tmp_path / "out")

    ids = scored_trace_ids(outcome)
    assert len(ids) == 2 and all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    document = json.loads(fixture.read_text())
    raw = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    assert base64.b64decode(raw).hex() in ids


def test_traces_of_other_services_are_counted_and_left_unscored(
    tmp_path: Path, score: Score
) -> None:
    folder = tmp_path / "mixed"
    agent = AgentTrace("agent", tool=None)
    http = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "api"}}]
                },
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "ab" * 16,
                                "spanId": "cd" * 8,
                                "name": "GET /health",
                                "startTimeUnixNano": "1",
                                "endTimeUnixNano": "2",
                            }
                        ]
                    }
                ],
            }
        ]
    }
    write_s3_layout(folder, [export_request([agent]), http])

    outcome = score(folder, tmp_path / "out")

    counts = outcome.intake.counts
    assert (counts.traces, counts.not_agent, counts.problems) == (1, 1, 0)
    assert scored_trace_ids(outcome) == [agent.trace_id]


def test_kept_sessions_and_transcripts_are_traces_too(tmp_path: Path, score: Score) -> None:
    folder = tmp_path / "kept"
    folder.mkdir()
    adk_session = ROOT / "tests/fixtures/adk213/sessions/weather_session.json"
    (folder / "adk-session.json").write_bytes(adk_session.read_bytes())
    transcript = {
        "id": "chat-7",
        "metadata": {"service.version": "3.2", "tenant": "acme"},
        "messages": [
            {"role": "user", "content": "Order A-1?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "lookup", "arguments": '{"id": "A-1"}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"status": "shipped"}'},
            {"role": "assistant", "content": "It shipped."},
        ],
    }  # fmt: skip
    (folder / "transcript.json").write_text(json.dumps(transcript))

    outcome = score(folder, tmp_path / "out", strata=["tenant"])

    assert outcome.intake.counts.problems == 0
    by_version = {v.recording.agent_version: v for v in outcome.versions}
    assert set(by_version) == {"unknown", "3.2"}  # ADK's session names no version
    adk = json.loads(adk_session.read_text())
    adk_run = by_version["unknown"].outcome.run
    assert adk_run.agent == adk.get("appName", adk.get("app_name"))
    (adk_trial,) = [
        line["trial"] for line in trial_lines(outcome) if line["trial"]["case_id"] == adk["id"]
    ]
    assert len(adk_trial["turns"]) == 2 and adk_trial["final_session_state"] == adk["state"]
    (chat_trial,) = [
        line["trial"] for line in trial_lines(outcome) if line["trial"]["case_id"] == "chat-7"
    ]
    (call,) = [e["call"] for e in chat_trial["turns"][0]["events"] if e["kind"] == "tool_call"]
    assert (call["name"], call["args"], call["result"]) == (
        "lookup",
        {"id": "A-1"},
        {"status": "shipped"},
    )
    shares = {tuple(s.stratum.values()): s.seen for s in outcome.intake.shares}
    assert shares == {("unknown", "-"): 1, ("3.2", "acme"): 1}
