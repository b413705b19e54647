"""Watching versions: each agent version's pass rate with its interval, and a drop from
the version before it called only when the comparison's own tests say so — on the traces
pooled by stratum (production traces are never the same case twice), or case by case
when a case attribute names the cases."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.otlp_traces import BASE_NS, AgentTrace, export_request, write_s3_layout
from tests.unit.traces.conftest import Score

MINUTE = 60_000_000_000


def _version(
    name: str, version: str, passing: int, failing: int, start: int, **attributes: str
) -> list[AgentTrace]:
    """``passing`` traces that call no tool, ``failing`` that call one, from ``start``."""
    return [
        AgentTrace(
            f"{name}-{n}",
            version=version,
            tool=None if n < passing else "get_weather",
            start_ns=BASE_NS + (start + n) * MINUTE,
            root_attributes=dict(attributes),
        )
        for n in range(passing + failing)
    ]


def _write(source: Path, traces: list[AgentTrace]) -> None:
    write_s3_layout(source, [export_request(traces[n : n + 10]) for n in range(0, len(traces), 10)])


def test_a_planted_drop_between_versions_is_called_a_regression(
    tmp_path: Path, score: Score
) -> None:
    old = _version("old", "1.0", passing=28, failing=2, start=0)
    new = _version("new", "1.1", passing=12, failing=18, start=100)
    _write(tmp_path / "src", new + old)  # the order read is not the order they ran

    outcome = score(tmp_path / "src", tmp_path / "out")

    first, second = outcome.versions
    assert first.recording.agent_version == "1.0" and first.comparison is None
    run = second.outcome.run
    assert (run.totals.pass_rate, run.totals.ci_low < 0.4 < run.totals.ci_high) == (0.4, True)
    record = second.comparison
    assert record is not None and record.regressed
    comparison = record.comparison
    assert comparison is not None
    (pooled,) = comparison.cases
    assert (pooled.case_id, pooled.verdict) == ("all traces", "regression")
    assert pooled.baseline is not None and (pooled.baseline.passed, pooled.baseline.runs) == (
        28,
        30,
    )
    assert pooled.candidate is not None and (pooled.candidate.passed, pooled.candidate.runs) == (
        12,
        30,
    )
    assert pooled.p_adjusted is not None and pooled.p_adjusted < 0.001
    assert pooled.test == "boschloo"
    saved = json.loads((Path(second.recording.folder) / "comparison.json").read_text())
    assert saved["comparison"]["regressed"] is True
    lines = outcome.lines()
    assert "  against agent version 1.0:" in lines
    assert any("regressed: all traces 28/30 -> 12/30" in line for line in lines)


def test_versions_that_score_alike_are_not_called_changed(tmp_path: Path, score: Score) -> None:
    old = _version("old", "1.0", passing=18, failing=2, start=0)
    new = _version("new", "1.1", passing=17, failing=3, start=100)
    _write(tmp_path / "src", old + new)

    outcome = score(tmp_path / "src", tmp_path / "out")

    record = outcome.versions[1].comparison
    assert record is not None and not record.regressed
    assert record.comparison is not None
    assert record.comparison.cases[0].verdict == "no significant change"


def test_the_drop_is_found_in_the_stratum_it_is_in(tmp_path: Path, score: Score) -> None:
    old = _version("old-a", "1.0", 20, 0, 0, tenant="acme") + _version(
        "old-g", "1.0", 20, 0, 30, tenant="globex"
    )
    new = _version("new-a", "1.1", 20, 0, 100, tenant="acme") + _version(
        "new-g", "1.1", 4, 16, 130, tenant="globex"
    )
    _write(tmp_path / "src", old + new)

    outcome = score(tmp_path / "src", tmp_path / "out", strata=["tenant"])

    record = outcome.versions[1].comparison
    assert record is not None and record.comparison is not None
    verdicts = {case.case_id: case.verdict for case in record.comparison.cases}
    assert verdicts == {"tenant=acme": "no significant change", "tenant=globex": "regression"}


def test_named_cases_are_compared_case_by_case(tmp_path: Path, score: Score) -> None:
    traces = []
    for version, start, failing_probe in (("1.0", 0, None), ("1.1", 100, "probe-b")):
        for probe in ("probe-a", "probe-b"):
            for n in range(12):
                traces.append(
                    AgentTrace(
                        f"{version}-{probe}-{n}",
                        version=version,
                        tool="get_weather" if probe == failing_probe else None,
                        start_ns=BASE_NS + (start + n) * MINUTE,
                        root_attributes={"app.probe": probe},
                    )
                )
    _write(tmp_path / "src", traces)

    outcome = score(tmp_path / "src", tmp_path / "out", case_attribute="app.probe")

    run = outcome.versions[1].outcome.run
    assert {case.case_id: case.runs for case in run.cases} == {"probe-a": 12, "probe-b": 12}
    record = outcome.versions[1].comparison
    assert record is not None and record.comparison is not None
    verdicts = {case.case_id: case.verdict for case in record.comparison.cases}
    assert verdicts == {"probe-a": "no significant change", "probe-b": "regression"}
