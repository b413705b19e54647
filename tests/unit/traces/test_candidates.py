"""Failing production traces become candidate cases (the ``--from-session`` path) in an
eval set the team reviews, with each trace's id and time kept; ``eval-set validate``
accepts the file and a normal run re-runs its cases. And bad input is refused in one
line before anything is read."""

from __future__ import annotations

import json
from pathlib import Path

from agentflow_eval.files.loading import load_evalset
from tests.support.otlp_traces import AgentTrace, export_request, write_s3_layout
from tests.unit.traces.conftest import ROOT, Score


def _traces(source: Path) -> tuple[list[AgentTrace], list[AgentTrace]]:
    passing = [AgentTrace(f"ok-{n}", tool=None) for n in range(3)]
    failing = [
        AgentTrace("called-a-tool", question="Weather in Tokyo?", tool="get_weather"),
        AgentTrace("crashed", question="Weather in Oslo?", tool=None, error="RuntimeError: boom"),
    ]
    write_s3_layout(source, [export_request(passing + failing[:1]), export_request(failing[1:])])
    return passing, failing


def test_failing_traces_become_cases_that_validate_and_run_again(
    tmp_path: Path, score: Score, cli, config: Path
) -> None:
    _, failing = _traces(tmp_path / "src")
    candidates = tmp_path / "review" / "production.evalset.json"

    outcome = score(tmp_path / "src", tmp_path / "out", candidates_to=str(candidates))

    assert outcome.candidates_added == 2
    cases = {case.eval_id: case for case in load_evalset(candidates).eval_set.eval_cases}
    assert set(cases) == {f"trace-{t.trace_id}" for t in failing}
    tool_case = cases[f"trace-{failing[0].trace_id}"]
    assert tool_case.conversation[0].user_content.text == "Weather in Tokyo?"
    assert tool_case.conversation[0].expected_tool_trajectory == []  # it failed: no reference
    meta = tool_case.metadata
    assert meta["trace_id"] == failing[0].trace_id
    assert meta["trace_time"] == "2026-01-01T00:00:00+00:00"
    assert meta["trace_object"].startswith("year=2026/month=01/day=01/hour=12/minute=00/")
    assert meta["agent_version"] == "1.0" and meta["failed"] == ["within_budget"]
    assert meta["from_session"] == f"{tmp_path / 'src'}#{failing[0].trace_id}"
    crashed = cases[f"trace-{failing[1].trace_id}"].metadata
    assert crashed["failed"] == ["error: RuntimeError: boom"]

    checked = cli("eval-set", "validate", str(candidates), "--config", str(config))
    assert checked.returncode == 0, checked.stderr
    assert "2 cases" in checked.stdout

    rerun = cli(
        "run",
        "examples.weather.agent:agent",
        str(candidates),
        "--config",
        str(config),
        "--runs",
        "1",
        "--output",
        str(tmp_path / "rerun"),
        "--no-prefect",
    )
    assert rerun.returncode == 0, rerun.stderr
    [results] = (tmp_path / "rerun").glob("*/*/results.json")
    run = json.loads(results.read_text())
    assert {case["case_id"] for case in run["cases"]} == set(cases)
    assert run["totals"]["trials"] == 2


def test_a_failure_added_twice_is_one_case(tmp_path: Path, score: Score) -> None:
    _traces(tmp_path / "src")
    candidates = tmp_path / "candidates.json"
    first = score(tmp_path / "src", tmp_path / "out", candidates_to=str(candidates))
    other = score(tmp_path / "src", tmp_path / "elsewhere", candidates_to=str(candidates))
    assert first.candidates_added == 2 and other.candidates_added == 0
    assert [v.candidates.already for v in other.versions if v.candidates] == [2]
    assert len(load_evalset(candidates).eval_set.eval_cases) == 2


def test_criteria_that_need_a_reference_are_refused_before_anything_is_read(
    tmp_path: Path, cli
) -> None:
    _traces(tmp_path / "src")
    config = ROOT / "examples/weather/eval_config.json"
    out = tmp_path / "out"

    result = cli(
        "traces",
        "score",
        str(tmp_path / "src"),
        "--config",
        str(config),
        "--output",
        str(out),
        "--no-prefect",
    )

    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "tool_trajectory_avg_score (expected_tool_trajectory)" in line
    assert "response_match_score (expected_final_response)" in line
    assert not out.exists()


def test_results_kept_among_the_traces_are_refused(tmp_path: Path, cli, config: Path) -> None:
    _traces(tmp_path / "src")
    result = cli(
        "traces",
        "score",
        str(tmp_path / "src"),
        "--config",
        str(config),
        "--output",
        str(tmp_path / "src" / "results"),
        "--no-prefect",
    )
    assert result.returncode == 2
    assert "inside the traces' folder" in result.stderr
    assert not (tmp_path / "src" / "results").exists()


def test_the_command_scores_and_says_what_it_did(tmp_path: Path, cli, config: Path) -> None:
    _traces(tmp_path / "src")
    out = tmp_path / "out"

    result = cli(
        "traces",
        "score",
        str(tmp_path / "src"),
        "--config",
        str(config),
        "--output",
        str(out),
        "--sample-rate",
        "100%",
        "--no-prefect",
    )
    again = cli(
        "traces",
        "score",
        str(tmp_path / "src"),
        "--config",
        str(config),
        "--output",
        str(out),
        "--no-prefect",
    )

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"{tmp_path / 'src'}: 2 new object(s) read"
    assert lines[1] == "5 agent trace(s), 5 scored (100.0%, sample rate 1)"
    assert lines[2].startswith("weather-agent 1.0: 5 trace(s) scored, pass rate 60.0% (95% CI")
    assert "2 failing trace(s) added as candidate cases" in lines[3]
    assert (
        again.returncode == 0
        and again.stdout.strip() == f"{tmp_path / 'src'}: no new trace objects"
    )
