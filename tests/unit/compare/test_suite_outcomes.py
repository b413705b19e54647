"""A regression suite's pieces without Prefect: each eval set's outcome found by its label
in a published history (a local folder store), the suite's verdict and gate, the summary
page, and the summary published (or kept, when the store refuses)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.sample_results import sample_run, write_run_dir

from agentflow_eval.compare.baseline import compare_with_baseline, write_run_comparison
from agentflow_eval.compare.suite import (
    EvalSetOutcome,
    SuiteSummary,
    failed_outcome,
    suite_verdict,
)
from agentflow_eval.compare.suite_outcomes import (
    EvalSetIdentity,
    FlowRunEnd,
    eval_set_identity,
    outcome_of_entry,
)
from agentflow_eval.errors import StoreError
from agentflow_eval.models.regression import REGRESSION_LABEL
from agentflow_eval.publish.publisher import RetryPolicy, publish_run
from agentflow_eval.publish.suite_publisher import publish_suite_summary, write_suite_summary
from agentflow_eval.report.suite_brief import suite_lines, suite_markdown, suite_table
from agentflow_eval.report.suite_page import render_suite_summary
from agentflow_eval.storage.local import LocalStore

REGRESSED = "weather_lookup_simple"
TAG = "nightly@flow-1#0"
DONE = FlowRunEnd(name="nightly-1-weather", state="Completed", completed=True)


def _publish(tmp_path: Path, name: str, run, eval_set, baseline: Path | None = None) -> Path:
    folder = write_run_dir(tmp_path / name, run)
    if baseline is not None:
        record = compare_with_baseline(run, str(baseline), fail_on_regression=True)
        write_run_comparison(folder, record)
    assert publish_run(folder, tmp_path / "published").published
    return folder


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "published")


def _outcome(store: LocalStore, eval_set_id: str, end: FlowRunEnd = DONE) -> EvalSetOutcome:
    return outcome_of_entry(
        store,
        index=0,
        agent="pkg.weather:agent",
        identity=EvalSetIdentity(eval_set_id, "Weather"),
        tag=TAG,
        baseline="latest",
        flow_run=end,
    )


def test_a_regressed_run_is_found_by_its_label_with_its_cases(tmp_path, store) -> None:
    good, eval_set = sample_run(trials=10)
    bad, _ = sample_run(trials=10, behaviour_of={REGRESSED: "wrong_tool"}, run_id="bad1")
    good_folder = _publish(tmp_path, "good", good, eval_set)
    bad = bad.model_copy(update={"labels": {REGRESSION_LABEL: TAG}})
    _publish(tmp_path, "bad", bad, eval_set, baseline=good_folder)

    outcome = _outcome(store, good.eval_set_id)
    assert outcome.status == "regression" and outcome.run_id == "bad1"
    assert outcome.baseline_run_id == good.run_id
    (case,) = outcome.regressed_cases
    assert case.case_id == REGRESSED
    assert (case.baseline, case.candidate) == ("10/10", "0/10")
    assert case.p_adjusted is not None and case.p_adjusted < 0.05
    assert outcome.report_url and outcome.report_url.startswith("file://")
    assert outcome.report_url.endswith("/report.html")
    assert outcome.gate_failed and outcome.fails_gate

    # the good run, which carries no label of this suite run, is never taken for it
    assert _outcome(store, good.eval_set_id).run_id == "bad1"
    other = outcome_of_entry(
        store,
        index=0,
        agent="a",
        identity=EvalSetIdentity(good.eval_set_id),
        tag="nightly@flow-2#0",
        baseline="latest",
        flow_run=DONE,
    )
    assert other.status == "failed" and "no run labelled regression=nightly@flow-2#0" in (
        other.problem or ""
    )


def test_an_eval_set_without_a_run_says_how_its_flow_run_ended(store) -> None:
    crashed = FlowRunEnd(name="nightly-2-x", state="Crashed", message="worker died")
    outcome = _outcome(store, "weather", crashed)
    assert outcome.status == "failed"
    assert outcome.problem == "its evaluate run ended Crashed: worker died"
    assert outcome.flow_run == "nightly-2-x" and outcome.flow_run_state == "Crashed"


def test_a_store_that_cannot_be_read_is_a_failed_outcome_not_an_error() -> None:
    class Down:
        def describe(self) -> str:
            return "s3://down"

        def get(self, key: str) -> bytes | None:
            raise StoreError("cannot download s3://down/x: connection refused", transient=True)

        def put(self, *args: object) -> None:
            raise StoreError("cannot upload", transient=False)

        def url(self, key: str) -> str:
            return f"s3://down/{key}"

    outcome = _outcome(Down(), "weather")
    assert outcome.status == "failed" and "connection refused" in (outcome.problem or "")


def test_a_first_run_is_not_compared_and_passes_the_gate(tmp_path, store) -> None:
    first, _eval_set = sample_run(trials=5)
    first = first.model_copy(update={"labels": {REGRESSION_LABEL: TAG}})
    folder = write_run_dir(tmp_path / "first", first)
    record = compare_with_baseline(
        first, "latest", publish_to=str(tmp_path / "published"), fail_on_regression=True
    )
    assert record.problem is not None and record.problem.kind == "no-earlier-run"
    write_run_comparison(folder, record)
    publish_run(folder, tmp_path / "published")
    outcome = _outcome(store, first.eval_set_id)
    assert outcome.status == "not compared" and outcome.problem_kind == "no-earlier-run"
    assert not outcome.fails_gate


def _summary(*outcomes: EvalSetOutcome, gate: bool = True) -> SuiteSummary:
    from datetime import UTC, datetime

    moment = datetime(2026, 11, 20, 3, 0, tzinfo=UTC)
    return SuiteSummary(
        suite="nightly",
        flow_run_id="f9a66a8f",
        started_at=moment,
        finished_at=moment,
        publish_to="s3://reports/agents",
        baseline="latest",
        fail_on_regression=gate,
        verdict=suite_verdict(list(outcomes)),
        evals=list(outcomes),
    )


def _status(index: int, status: str, **fields) -> EvalSetOutcome:
    return EvalSetOutcome(
        index=index,
        eval_set_id=f"set{index}",
        agent="a:b",
        status=status,
        baseline="latest",
        **fields,
    )


@pytest.mark.parametrize(
    ("statuses", "verdict"),
    [
        (["improvement", "regression", "failed"], "regression"),
        (["improvement", "failed"], "incomplete"),
        (["no significant change", "improvement", "not compared"], "improvement"),
        (["no significant change", "not compared"], "no significant change"),
    ],
)
def test_the_suite_verdict(statuses: list[str], verdict: str) -> None:
    assert suite_verdict([_status(i, s) for i, s in enumerate(statuses)]) == verdict


def test_the_gate_fails_on_a_regression_a_failure_or_an_unreadable_baseline() -> None:
    unreadable = _status(0, "not compared", problem_kind="unavailable", problem="store down")
    first_night = _status(0, "not compared", problem_kind="no-earlier-run")
    assert _summary(unreadable).gate_failed
    assert not _summary(first_night, _status(1, "improvement")).gate_failed
    assert _summary(first_night, _status(1, "failed", problem="x")).gate_failed
    assert not _summary(_status(0, "regression"), gate=False).gate_failed
    assert failed_outcome(
        index=0,
        agent="a",
        eval_set_id="x",
        eval_set_name="",
        baseline="latest",
        problem="p",
        flow_run=None,
        flow_run_state=None,
    ).fails_gate


def _regressed_summary() -> SuiteSummary:
    from agentflow_eval.compare.suite import RegressedCase

    regressed = _status(
        0,
        "regression",
        eval_set_name="Weather",
        pass_rate=0.4,
        ci_low=0.2,
        ci_high=0.6,
        trials=10,
        change=-0.5,
        overall_verdict="regression",
        baseline_run_id="run-good",
        report_url="https://reports.example.com/weather/report.html",
        regressed_cases=[
            RegressedCase(
                case_id="rain_in_paris", baseline="5/5", candidate="0/5", p_adjusted=0.004
            )
        ],
    )
    return _summary(regressed, _status(1, "failed", problem="its evaluate run ended Crashed"))


def test_the_summary_page_marks_a_regressed_row_with_its_case() -> None:
    page = render_suite_summary(_regressed_summary())
    row = page.split('<tr class="regression">', 1)[1].split("</tr>", 1)[0]
    assert "▼" in row and "<code>rain_in_paris</code> 5/5 → 0/5" in row
    assert 'href="https://reports.example.com/weather/report.html"' in row
    assert "its evaluate run ended Crashed" in page
    assert "<script" not in page


def test_the_brief_leads_with_what_regressed() -> None:
    summary = _regressed_summary()
    lines = suite_lines(summary, "https://x/summary.html")
    assert lines[0].startswith("suite nightly: regression (2 eval set(s), 1 regressed, 1 failed")
    assert (
        "set0: regression, pass rate 40% (-50.0 pts); regressed: rain_in_paris 5/5 -> 0/5"
        in (lines[1])
    )
    assert lines[-1] == "  fail_on_regression: the suite fails"
    markdown = suite_markdown(summary, None, "suite summary not published: refused")
    assert "**Summary not published:**" in markdown
    assert [row["status"] for row in suite_table(summary)] == ["regression", "failed"]


def test_the_summary_is_written_locally_then_published_with_a_latest_pointer(tmp_path) -> None:
    summary = _regressed_summary()
    local = write_suite_summary(summary, tmp_path / "out")
    assert local.parent == tmp_path / "out" / "regression" / "nightly"
    published = publish_suite_summary(summary, LocalStore(tmp_path / "pub"), local)
    assert published.published and published.summary_url
    suite_dir = tmp_path / "pub" / "regression" / "nightly"
    saved = json.loads((suite_dir / local.name / "summary.json").read_text())
    assert SuiteSummary.model_validate(saved) == summary
    latest = json.loads((suite_dir / "latest.json").read_text())
    assert latest["folder"] == local.name and latest["verdict"] == "regression"


def test_a_store_that_refuses_the_summary_leaves_it_local_and_says_so(tmp_path) -> None:
    summary = _regressed_summary()
    local = write_suite_summary(summary, tmp_path / "out")

    class Refusing(LocalStore):
        def put(self, *args: object) -> None:
            raise StoreError("cannot upload: AccessDenied", transient=False)

    outcome = publish_suite_summary(
        summary, Refusing(tmp_path / "pub"), local, retry=RetryPolicy(attempts=2)
    )
    assert not outcome.published and outcome.summary_url is None
    assert "AccessDenied" in outcome.message and str(local) in outcome.message
    assert (local / "summary.html").is_file()


def test_an_eval_set_file_that_cannot_be_read_is_named_by_its_stem(tmp_path) -> None:
    good = tmp_path / "support.evalset.json"
    case = {"eval_id": "hi", "conversation": [{"user_content": "hi"}]}
    case["expectations"] = ["completes"]
    good.write_text(
        json.dumps({"eval_set_id": "support_v2", "name": "Support", "eval_cases": [case]})
    )
    assert eval_set_identity(str(good)) == EvalSetIdentity("support_v2", "Support")
    assert eval_set_identity(str(tmp_path / "billing.evalset.json")).eval_set_id == "billing"
    assert eval_set_identity(str(tmp_path / "billing.evalset.json")).problem
