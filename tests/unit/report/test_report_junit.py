"""JUnit XML: one testcase per case, failures and errors that say why, valid XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.sample_results import sample_run

from agentflow_eval.models.results import RunResult
from agentflow_eval.report.junit import junit_xml, write_junit


@pytest.fixture(scope="module")
def run() -> RunResult:
    return sample_run()[0]


def cases_of(document: str) -> dict[str, ET.Element]:
    root = ET.fromstring(document)
    return {tc.get("name", ""): tc for tc in root.iter("testcase")}


def test_one_testcase_per_case_with_suite_counts(run: RunResult) -> None:
    root = ET.fromstring(junit_xml(run))
    (suite,) = root.findall("testsuite")
    testcases = suite.findall("testcase")
    assert [tc.get("name") for tc in testcases] == [c.case_id for c in run.cases]
    assert all(tc.get("classname") == "travel_agent_nightly" for tc in testcases)
    with_failure = sum(tc.find("failure") is not None for tc in testcases)
    with_error = sum(tc.find("error") is not None for tc in testcases)
    assert suite.get("tests") == "6" and root.get("tests") == "6"
    assert suite.get("failures") == str(with_failure) == "3"
    assert suite.get("errors") == str(with_error) == "1"
    props = {p.get("name"): p.get("value") for p in suite.find("properties") or []}
    assert props["run_id"] == run.run_id and props["pass_rate"] == "0.5000"


def test_failure_names_passed_over_runs_and_failing_criteria(run: RunResult) -> None:
    tc = cases_of(junit_xml(run))["weather_multi_city"]
    failure = tc.find("failure")
    assert failure is not None
    assert failure.get("message") == (
        "passed 3/5 trials (60%, needs 100%); failing: trajectory IN_ORDER (2×)"
    )
    assert "trial 2: failed (trajectory IN_ORDER=0.50)" in (failure.text or "")
    props = {p.get("name"): p.get("value") for p in tc.find("properties") or []}
    assert props["pass_rate"] == "0.6000" and props["passed"] == "3/5"


def test_errored_trials_become_an_error_element(run: RunResult) -> None:
    tc = cases_of(junit_xml(run))["hotel_booking_two_turns"]
    error = tc.find("error")
    assert error is not None
    assert error.get("message") == "3/5 trials errored: timeout (2×), exception (1×)"
    assert "BookingUnavailable: 503" in (error.text or "")
    assert tc.find("failure") is None  # no trial failed a criterion


def test_passing_cases_and_a_lower_bar(run: RunResult) -> None:
    strict = cases_of(junit_xml(run))
    assert strict["weather_lookup_simple"].find("failure") is None
    lenient = cases_of(junit_xml(run, min_pass_rate=0.6))
    assert lenient["weather_multi_city"].find("failure") is None
    assert lenient["currency_conversion"].find("failure") is not None
    with pytest.raises(ValueError, match=r"min_pass_rate must be within 0\.\.1, got 1\.5"):
        junit_xml(run, min_pass_rate=1.5)


def test_control_characters_xml_cannot_carry_are_shown_escaped(tmp_path: Path) -> None:
    run = sample_run(cases=1, trials=1, payload="x")[0]
    run.trials[0].trial.turns[0].final_response = "bell\x07 nul\x00 esc\x1b <b>&"
    run.cases[0].case_id = run.trials[0].trial.case_id = "case\x01id"
    path = write_junit(run, tmp_path / "junit.xml")
    root = ET.parse(path).getroot()  # parses: the document is well-formed
    out = root.find(".//system-out")
    assert out is not None and "bell\\x07 nul\\x00 esc\\x1b <b>&" in (out.text or "")
    assert root.find(".//testcase").get("name") == "case\\x01id"  # type: ignore[union-attr]


def test_a_failure_shows_the_expected_tool_calls_and_each_trials_actual_ones(
    run: RunResult,
) -> None:
    failure = cases_of(junit_xml(run))["weather_multi_city"].find("failure")
    assert failure is not None
    lines = (failure.text or "").splitlines()
    assert lines[0] == ('expected   get_weather(location="Tokyo") → get_weather(location="London")')
    trial = lines.index(next(line for line in lines if line.startswith("trial 2: failed")))
    assert lines[trial + 1] == (
        '  actual   get_weather(location="Tokyo") → '
        'get_weather(location="London, UK", units="metric")'
    )
