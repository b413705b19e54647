"""Malformed, truncated and hostile traces are counted, named and redacted; nothing in a
trace stops the batch: the traces around them are scored as ever."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from agentflow_eval.models import defaults
from agentflow_eval.pipeline.score_traces import TracesOutcome
from agentflow_eval.redaction import REDACTED
from tests.support.otlp_traces import AgentTrace, attributes, export_request, write_s3_layout
from tests.unit.traces.conftest import Score, scored_trace_ids

SECRETS = {
    "bearer": "sk-live-0123456789abcdefABCDEF",
    "password": "correct-horse-battery-staple",
    "tool_key": "zq81Kk2oPq77LmnB",
}


def _lines(out: Path, name: str) -> list[dict[str, object]]:
    [batch] = list((out / "traces").glob("*/*"))
    with (batch / name).open() as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _problems(out: Path) -> list[dict[str, object]]:
    return _lines(out, "problems.jsonl")


def _altered(out: Path) -> list[dict[str, object]]:
    return _lines(out, "altered.jsonl")


def scored_object(outcome: TracesOutcome) -> str:
    [version] = outcome.intake.versions
    with (Path(version.folder) / "traces.jsonl").open() as handle:
        return str(json.loads(handle.readline())["object"])


def test_unreadable_objects_and_lines_are_counted_and_named_and_the_rest_scored(
    tmp_path: Path, score: Score
) -> None:
    source = tmp_path / "src"
    good = [AgentTrace(f"good-{n}", tool=None) for n in range(4)]
    folder = source / "year=2026/month=01/day=01/hour=00/minute=00"
    folder.mkdir(parents=True)
    line = json.dumps(export_request([good[0]]))
    # a file exporter's file: a good line, a line cut off mid-write, not JSON, not OTLP
    (folder / "lines.json").write_text(
        "\n".join(
            [
                line,
                line[: len(line) // 2],
                "this is not json",
                '{"metrics": []}',
                json.dumps(export_request([good[1]])),
            ]
        )
        + "\n"
    )
    body = gzip.compress(json.dumps(export_request([good[2]])).encode())
    (folder / "cut.json.gz").write_bytes(body[: len(body) // 2])  # gzip cut short
    broken = export_request([AgentTrace("no-id", tool=None), good[3]])
    del broken["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    bad_time = export_request([AgentTrace("bad-time", tool=None)])
    bad_time["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["startTimeUnixNano"] = "soon"
    (folder / "spans.json").write_text(json.dumps(broken) + "\n" + json.dumps(bad_time) + "\n")
    (folder / "deep.json").write_text("[" * 200_000 + "]" * 200_000)  # past any parser
    (folder / "huge.json").write_bytes(
        b'{"resourceSpans": ["' + b"x" * (2 * 1024 * 1024) + b'"]}\n'
    )

    outcome = score(source, tmp_path / "out", max_file_mb=1)

    assert sorted(scored_trace_ids(outcome)) == sorted(
        t.trace_id for t in (good[0], good[1], good[3])
    )
    problems = _problems(tmp_path / "out")
    named: dict[tuple[str, int], list[str]] = {}
    for p in problems:
        named.setdefault((str(p["object"]).rsplit("/", 1)[-1], int(p["line"])), []).append(
            str(p["reason"])
        )
    [cut_line] = named[("lines.json", 2)]
    assert cut_line.startswith("not JSON")
    assert named[("lines.json", 3)][0].startswith("not JSON")
    assert "not an OTLP trace export" in named[("lines.json", 4)][0]
    assert named[("cut.json.gz", 1)][0].startswith("not gzip, or cut short")
    no_id, rest_of_it = sorted(named[("spans.json", 1)])
    assert no_id == "a span has no traceId"
    assert rest_of_it.startswith("incomplete: its first span 'chat gpt' has a parent")
    assert "a span is not OTLP" in named[("spans.json", 2)][0]
    assert named[("deep.json", 1)] == ["nested too deep to read"]
    assert "longer than 1,048,576 bytes" in named[("huge.json", 1)][0]
    bad = next(p for p in problems if str(p["object"]).endswith("spans.json") and p["line"] == 2)
    assert bad["trace_id"] == AgentTrace("bad-time").trace_id
    assert outcome.intake.counts.problems == len(problems) == 9
    assert any("lines.json:2: not JSON" in name for name in outcome.intake.counts.named)
    assert any("9 unreadable" in line for line in outcome.lines())


def test_huge_and_deeply_nested_attributes_are_cut_to_the_limits(
    tmp_path: Path, score: Score
) -> None:
    nested: object = "bottom"
    for _ in range(40):  # inside what a parser takes, past what a span may nest
        nested = {"inner": nested}
    trace = AgentTrace(
        "hostile",
        tool="search",
        tool_args={"query": "q" * (defaults.TRACE_MAX_CHARS + 5_000)},
        root_attributes={"app.context": nested},
    )
    write_s3_layout(tmp_path / "src", [export_request([trace, AgentTrace("fine", tool=None)])])

    outcome = score(tmp_path / "src", tmp_path / "out")

    assert len(scored_trace_ids(outcome)) == 2
    assert outcome.intake.counts.cut_traces == 1
    # the tool's arguments past the longest text, the context past the deepest nesting
    assert _altered(tmp_path / "out") == [
        {
            "object": scored_object(outcome),
            "line": 1,
            "trace_id": trace.trace_id,
            "cut": 2,
            "redacted": 0,
        }
    ]
    assert any("1 trace(s) with a value cut to the limits" in line for line in outcome.lines())
    [scored] = outcome.versions
    trials = (scored.outcome.run_dir / "trials.jsonl").read_text()
    assert re.search(r"… \[cut: 5,0\d\d characters more\]", trials)  # said so
    assert "q" * (defaults.TRACE_MAX_CHARS + 1) not in trials


def test_secrets_in_attributes_are_redacted_everywhere_the_batch_writes(
    tmp_path: Path, score: Score
) -> None:
    trace = AgentTrace(
        "leaky",
        question=f"my key is {SECRETS['bearer']}, what's the weather?",
        tool="lookup",
        tool_args={
            "city": "Paris",
            "api_key": SECRETS["tool_key"],
            "password": SECRETS["password"],
        },
        root_attributes={
            "http.request.header.authorization": f"Bearer {SECRETS['bearer']}",
            "db.password": SECRETS["password"],
        },
        resource_attributes={"deployment.token": SECRETS["password"]},
    )
    write_s3_layout(tmp_path / "src", [export_request([trace])])

    outcome = score(tmp_path / "src", tmp_path / "out")

    assert scored_trace_ids(outcome) == [trace.trace_id]
    assert outcome.intake.counts.redacted_traces == 1
    [altered] = _altered(tmp_path / "out")
    # the two named like secrets, the tool call's arguments, the question with a key in it
    assert (altered["trace_id"], altered["redacted"]) == (trace.trace_id, 4)
    assert outcome.versions[0].candidates is not None  # it called a tool: it failed
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert any(p.name == "report.html" for p in written)
    assert any(p.name.endswith(".candidates.evalset.json") for p in written)
    for path in written:
        text = path.read_bytes().decode("utf-8", "replace")
        for secret in SECRETS.values():
            assert secret not in text, f"{secret} in {path}"
    judged = (outcome.versions[0].outcome.run_dir / "judged.jsonl").read_text()
    assert REDACTED in judged and "Paris" in judged  # the rest of the trace is kept


def test_attribute_names_and_strata_values_from_a_trace_never_break_the_batch(
    tmp_path: Path, score: Score
) -> None:
    odd = AgentTrace(
        "odd",
        tool=None,
        version="../../etc/passwd\n\x1b[31m",
        root_attributes={"tenant": ["a", {"b": 1}]},
    )
    resource_less = export_request([AgentTrace("plain", tool=None)])
    resource_less["resourceSpans"][0]["resource"] = {
        "attributes": [*attributes({"k": "v"}), {"no": "key"}]
    }
    write_s3_layout(tmp_path / "src", [export_request([odd]), resource_less])

    outcome = score(tmp_path / "src", tmp_path / "out", strata=["tenant"])

    assert scored_trace_ids(outcome) == [odd.trace_id]
    assert outcome.intake.counts.problems == 1
    [scored] = outcome.versions
    assert scored.recording.agent_version == odd.version
    assert Path(scored.recording.folder).parent == Path(outcome.intake.versions[0].folder).parent
    assert ".." not in Path(scored.recording.folder).name
