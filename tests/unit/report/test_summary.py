"""The run summary ``agentflow-eval run --json`` prints: totals, each case's counts and
where it stands, where the files are, and the gate."""

from __future__ import annotations

import json
from pathlib import Path

from support.sample_results import sample_run

from agentflow_eval.report.summary import RunSummary, run_summary


def test_the_summary_holds_totals_cases_and_paths_but_no_trials() -> None:
    run, _ = sample_run(trials=4)
    summary = run_summary(run, Path("/runs/x"), fail_under=0.8, notes=["published to /pub"])
    document = json.loads(summary.model_dump_json())
    assert document["totals"]["passed"] == run.totals.passed == 12
    assert document["totals"]["trials"] == 24
    assert document["run_dir"] == "/runs/x"
    assert document["report"] == "/runs/x/report.html"
    assert document["results"] == "/runs/x/results.json"
    assert document["fail_under"] == 0.8 and document["below_fail_under"] is True
    assert document["notes"][-1] == "published to /pub"
    verdicts = {case["case_id"]: case["verdict"] for case in document["cases"]}
    assert verdicts == {
        "weather_lookup_simple": "passing",
        "weather_multi_city": "flaky",
        "flight_search_basic": "passing",
        "currency_conversion": "failing",
        "hotel_booking_two_turns": "flaky",
        "html_in_answer": "failing",
    }
    assert "trials" not in document and "expected" not in document["cases"][0]
    assert RunSummary.model_validate(document) == summary


def test_a_run_at_the_gate_is_not_below_it() -> None:
    run, _ = sample_run(trials=4)
    assert not run_summary(run, None, fail_under=0.5).below_fail_under
    assert not run_summary(run, None).below_fail_under
