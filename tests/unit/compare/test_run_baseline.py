"""A run compared with its baseline (``run --baseline``): the comparison record, the
baseline's problems, and ``latest`` in a published history that only moves to runs that
completed (every trial, and not failed by their regression gate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.run_counts import Counts, run_with_counts
from support.sample_results import sample_run, write_run_dir

from agentflow_eval.compare.baseline import (
    COMPARISON_FILE,
    compare_with_baseline,
    read_run_comparison,
    write_run_comparison,
)
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.results import RunResult
from agentflow_eval.publish.publisher import publish_run, run_folder

REGRESSED = "weather_lookup_simple"


def _good_and_bad() -> tuple[RunResult, RunResult, object]:
    good, eval_set = sample_run(trials=10)
    bad, _ = sample_run(trials=10, behaviour_of={REGRESSED: "wrong_tool"}, run_id="bad1")
    return good, bad, eval_set


def test_a_regressed_case_is_found_against_a_baseline_folder(tmp_path: Path) -> None:
    good, bad, _ = _good_and_bad()
    folder = write_run_dir(tmp_path / "good", good)
    record = compare_with_baseline(bad, str(folder), candidate_source="tonight")
    assert record.problem is None and record.comparison is not None
    verdicts = {case.case_id: case.verdict for case in record.comparison.cases}
    assert verdicts[REGRESSED] == "regression"
    assert {v for k, v in verdicts.items() if k != REGRESSED} == {"no significant change"}
    assert record.comparison.baseline.source == str(folder / "results.json")
    assert record.comparison.candidate.source == "tonight"
    assert record.regressed and not record.gate_failed  # report-only by default
    gated = compare_with_baseline(bad, str(folder), fail_on_regression=True)
    assert gated.gate_failed

    # comparison.json holds the record; the comparison inside is what compare --json prints
    (tmp_path / "bad").mkdir()
    write_run_comparison(tmp_path / "bad", record)
    assert read_run_comparison(tmp_path / "bad") == record
    document = json.loads((tmp_path / "bad" / COMPARISON_FILE).read_text())
    assert document["baseline"] == str(folder)
    assert document["comparison"]["overall"]["verdict"] in ("regression", "no significant change")
    assert read_run_comparison(tmp_path) is None  # a folder never compared


def test_a_baseline_that_cannot_be_read_is_a_problem_not_an_error(tmp_path: Path) -> None:
    _, bad, _ = _good_and_bad()
    missing = compare_with_baseline(bad, str(tmp_path / "nope"), fail_on_regression=True)
    assert missing.comparison is None and missing.problem is not None
    assert missing.problem.kind == "unavailable"
    assert missing.problem.message == f"{tmp_path / 'nope'}: no such file"
    assert missing.gate_failed  # under the gate, an unreadable baseline fails the run

    other = run_with_counts([Counts("a", 5, 5)], eval_set_id="another_set")
    write_run_dir(tmp_path / "other", other)
    wrong = compare_with_baseline(bad, str(tmp_path / "other"))
    assert wrong.problem is not None and wrong.problem.kind == "unavailable"
    assert "different eval sets" in wrong.problem.message

    # nothing published yet: the first run of a schedule, which passes its gate
    first = compare_with_baseline(
        bad, "latest", publish_to=str(tmp_path / "published"), fail_on_regression=True
    )
    assert first.problem is not None and first.problem.kind == "no-earlier-run"
    assert not first.gate_failed


def _publish(root: Path, run: RunResult, target: Path, eval_set=None, record=None) -> None:
    folder = write_run_dir(root / run_folder(run), run)
    if record is not None:
        write_run_comparison(folder, record)
    assert publish_run(folder, target).published


def _night(counts: list[Counts], run_id: str, day: int, **kw) -> RunResult:
    return run_with_counts(counts, run_id=run_id, day=day, **kw)


def test_latest_moves_only_to_runs_that_completed(tmp_path: Path) -> None:
    target = tmp_path / "published"
    runs = tmp_path / "runs"
    good = [Counts("a", 10, 10), Counts("b", 10, 10)]
    night1 = _night(good, "night1", 0)
    _publish(runs, night1, target)
    pointer = target / "travel_agent_nightly" / "latest.json"
    assert json.loads(pointer.read_text())["run_id"] == "night1"

    # night 2 regressed under fail_on_regression: published, in the history, never latest
    night2 = _night([Counts("a", 0, 10), Counts("b", 10, 10)], "night2", 1)
    record = compare_with_baseline(
        night2, "latest", publish_to=str(target), fail_on_regression=True
    )
    assert record.comparison is not None and record.comparison.baseline.run_id == "night1"
    assert record.gate_failed
    _publish(runs, night2, target, record=record)
    manifest = json.loads((target / "travel_agent_nightly" / "runs.json").read_text())
    assert [run["run_id"] for run in manifest["runs"]] == ["night2", "night1"]
    assert manifest["runs"][0]["gate_failed"] is True
    assert manifest["runs"][0]["comparison"]["regressed_cases"] == ["a"]
    assert (runs / run_folder(night2) / COMPARISON_FILE).is_file()
    assert (target / "travel_agent_nightly" / run_folder(night2) / COMPARISON_FILE).is_file()
    assert json.loads(pointer.read_text())["run_id"] == "night1"

    # a retry of the same agent is compared with the last good run, and regresses again
    retry = compare_with_baseline(
        _night([Counts("a", 0, 10), Counts("b", 10, 10)], "night3", 2),
        "latest",
        publish_to=str(target),
    )
    assert retry.comparison is not None and retry.comparison.baseline.run_id == "night1"
    assert retry.regressed

    # an incomplete run (a case short of its planned trials) never becomes latest either
    short = _night([Counts("a", 3, 3), Counts("b", 10, 10)], "night4", 3, runs_per_case=10)
    _publish(runs, short, target)
    assert json.loads(pointer.read_text())["run_id"] == "night1"
    entry = json.loads((target / "travel_agent_nightly" / "runs.json").read_text())["runs"][0]
    assert entry["run_id"] == "night4" and entry["complete"] is False

    # a report-only regression completes: it is the next run's baseline
    night5 = _night([Counts("a", 5, 10), Counts("b", 10, 10)], "night5", 4)
    report_only = compare_with_baseline(night5, "latest", publish_to=str(target))
    assert report_only.regressed and not report_only.gate_failed
    _publish(runs, night5, target, record=report_only)
    assert json.loads(pointer.read_text())["run_id"] == "night5"


def test_the_published_latest_is_never_the_run_itself(tmp_path: Path) -> None:
    target = tmp_path / "published"
    night1 = _night([Counts("a", 10, 10)], "night1", 0)
    night2 = _night([Counts("a", 9, 10)], "night2", 1)
    _publish(tmp_path / "runs", night1, target)
    _publish(tmp_path / "runs", night2, target)  # already published, then compared
    record = compare_with_baseline(night2, "latest", publish_to=str(target))
    assert record.comparison is not None
    assert record.comparison.baseline.run_id == "night1"


def test_latest_as_a_baseline_needs_a_publish_target() -> None:
    with pytest.raises(ValueError, match="baseline 'latest' is the last run published"):
        RunRequest(agent="a:b", evalset="e.json", baseline="latest")
    params = RunRequest(agent="a:b", evalset="e.json", baseline="latest", publish_to="s3://b/p")
    assert params.baseline == "latest" and params.fail_on_regression is False
    assert RunRequest(agent="a:b", evalset="e.json", baseline=" ").baseline is None
