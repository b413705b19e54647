"""A run's comparison with its baseline in its reports: report.html (a section, and an
arrow and a colour only on the cases that changed significantly, with the numbers
behind them), junit.xml (a regression fails only under fail_on_regression) and the
console scorecard. Written again after the report stage, through the same path."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.judged_file import JudgedFile, write_judged_file
from support.report_page import case_blocks
from support.run_counts import Counts, run_with_counts
from support.sample_results import sample_run, write_run_dir

from agentflow_eval.compare import compare_runs
from agentflow_eval.compare.baseline import compare_with_baseline
from agentflow_eval.compare.models import BaselineProblem, RunComparison
from agentflow_eval.files.case_trials import TrialsInMemory, each_case
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.csp import csp_hash
from agentflow_eval.report.html import render_html
from agentflow_eval.report.junit import COMPARISON_TESTCASE, JUnitDocument, junit_xml
from agentflow_eval.report.scorecard import format_scorecard
from agentflow_eval.report.writer import write_run_reports

REGRESSED = "weather_lookup_simple"
DELTA = re.compile(r'<span class="delta (\w+)" title="([^"]*)">([▼▲]) ([^<]*)</span>')


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, object, RunComparison]:
    good, eval_set = sample_run(trials=10)
    bad, _ = sample_run(trials=10, behaviour_of={REGRESSED: "wrong_tool"}, run_id="bad1")
    folder = write_run_dir(tmp_path_factory.mktemp("baseline"), good)
    return bad, eval_set, compare_with_baseline(bad, str(folder))


def test_only_the_significant_change_gets_an_arrow_and_a_colour(compared) -> None:
    bad, _eval_set, record = compared
    page = render_html(bad, record)
    start = page.index('<section class="comparison"')
    section = page[start : page.index("</section>", start)]
    assert "Compared with the baseline" in section
    assert '<div class="cmp-box regression">' in section
    assert "<strong>regression</strong> · 1 case changed" in section
    assert f"baseline: run <code>{record.comparison.baseline.run_id}</code>" in section

    blocks = re.split(r'(?=<details class="case )', page)
    lines = {
        case_id: next(b for b in blocks if f'data-id="{case_id}"' in b)
        for case_id in case_blocks(page)
    }
    marked = {case_id for case_id, line in lines.items() if 'class="delta' in line}
    assert marked == {REGRESSED}
    (mark,) = DELTA.findall(lines[REGRESSED])
    css, tooltip, arrow, points = mark
    assert (css, arrow, points) == ("regression", "▼", "−100.0 pts")
    # the numbers behind the arrow, on hover
    assert "baseline 10/10 (100%) → 0/10 (0%)" in tooltip
    assert "Boschloo" in tooltip and "Holm-adjusted" in tooltip
    # the table of significant changes has that case alone; every case is one click away
    changed = section[: section.index('<details class="cmp-all">')]
    assert changed.count("<tr class=") == 1 and f"<code>{REGRESSED}</code>" in changed
    everything = section[section.index('<details class="cmp-all">') :]
    assert everything.count("<tr class=") == len(bad.cases)
    # no inline style anywhere: the page's CSP allows only its own style element
    assert "style=" not in section
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    assert style and csp_hash(style.group(1)) in html.unescape(page)


def test_case_ids_and_sources_are_escaped(tmp_path: Path) -> None:
    hostile = '<img src=x onerror="alert(1)">'
    base = run_with_counts([Counts(hostile, 10, 10), Counts("b", 10, 10)], run_id="b&r")
    write_run_dir(tmp_path / "x<y", base)
    now = run_with_counts([Counts(hostile, 0, 10), Counts("b", 10, 10)], run_id="now", day=1)
    record = compare_with_baseline(now, str(tmp_path / "x<y"))
    assert record.regressed
    page = render_html(now, record)
    assert hostile not in page and "<img" not in page
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in page
    assert "x&lt;y/results.json" in page


def test_a_baseline_that_could_not_be_read_is_stated() -> None:
    run = run_with_counts([Counts("a", 3, 5)])
    record = RunComparison(
        baseline="latest",
        fail_on_regression=True,
        problem=BaselineProblem(kind="unavailable", message="s3://b/p/set: cannot download"),
    )
    page = render_html(run, record)
    assert (
        "<strong>Not compared</strong> with <code>latest</code>: s3://b/p/set: cannot download"
        in page
    )
    assert "a regression cannot be ruled out" in page
    assert 'class="delta' not in page
    lines = format_scorecard(run, comparison=record).splitlines()
    assert lines[-2] == "baseline latest: not compared: s3://b/p/set: cannot download"
    assert "failing" in lines[-1]


def _record(base: RunResult, now: RunResult, **options: bool) -> RunComparison:
    return RunComparison(baseline="night1", comparison=compare_runs(base, now), **options)


def _junit(run: RunResult, record: RunComparison, min_pass_rate: float = 1.0) -> str:
    document = JUnitDocument(run, comparison=record, min_pass_rate=min_pass_rate)
    return "".join(document.chunks(each_case(run.cases, TrialsInMemory(run.trials))))


def _suite(xml: str) -> ET.Element:
    suite = ET.fromstring(xml.encode("utf-8")).find("testsuite")
    assert suite is not None
    return suite


def test_junit_fails_a_regressed_case_only_under_fail_on_regression(compared) -> None:
    bad, _, record = compared
    report_only = _suite(_junit(bad, record))
    cases = {tc.get("name"): tc for tc in report_only.iter("testcase")}
    assert len(cases) == len(bad.cases) + 1 and COMPARISON_TESTCASE in cases
    props = {p.get("name"): p.get("value") for p in cases[REGRESSED].iter("property")}
    assert props["comparison_verdict"] == "regression"
    assert props["baseline_passed"] == "10/10" and props["change"] == "-1.0000"
    assert float(props["p_holm"]) <= 0.05
    assert all(f.get("type") != "Regression" for f in report_only.iter("failure"))
    assert cases[COMPARISON_TESTCASE].find("failure") is None
    suite_props = {p.get("name"): p.get("value") for p in report_only.find("properties")}
    assert suite_props["regressed"] == "true" and suite_props["fail_on_regression"] == "false"

    gated = record.model_copy(update={"fail_on_regression": True})
    failing = _suite(_junit(bad, gated))
    cases = {tc.get("name"): tc for tc in failing.iter("testcase")}
    failure = cases[REGRESSED].find("failure")
    assert failure is not None and failure.get("type") == "Regression"
    baseline_run = record.comparison.baseline.run_id
    assert failure.get("message", "").startswith(
        f"regressed from baseline run {baseline_run}: {REGRESSED} 10/10 -> 0/10"
    )
    gate = cases[COMPARISON_TESTCASE].find("failure")
    assert gate is not None and gate.get("type") == "Regression"
    # the suite's counts agree with its testcases
    failures = sum(tc.find("failure") is not None for tc in failing.iter("testcase"))
    assert failing.get("failures") == str(failures)
    assert failing.get("tests") == str(len(bad.cases) + 1)


def test_a_passing_case_that_regressed_fails_under_the_gate() -> None:
    base = run_with_counts([Counts("a", 30, 30), Counts("b", 30, 30)])
    now = run_with_counts([Counts("a", 18, 30), Counts("b", 30, 30)], day=1)
    record = _record(base, now, fail_on_regression=True)
    suite = _suite(_junit(now, record, min_pass_rate=0.5))
    cases = {tc.get("name"): tc for tc in suite.iter("testcase")}
    # 60% clears the 50% bar: only the regression makes it fail
    assert cases["a"].find("failure").get("type") == "Regression"  # type: ignore[union-attr]
    assert cases["b"].find("failure") is None


def test_reports_written_with_the_comparison_equal_the_in_memory_writers(
    tmp_path: Path,
) -> None:
    judged: JudgedFile = write_judged_file(tmp_path / "run", trials=3)
    summary, trials, digest = judged.fold()
    base = run_with_counts(
        [Counts(case.case_id, case.runs, case.runs) for case in summary.cases],
        eval_set_id=summary.eval_set_id,
        run_id="night1",
    )
    record = _record(base, summary, fail_on_regression=True)
    write_run_reports(summary, trials, digest, judged.paths.run_dir, record)
    full = summary.model_copy(update={"trials": judged.counted})
    page = (judged.paths.run_dir / "report.html").read_text()
    assert page == render_html(full, record)
    assert '<section class="comparison"' in page
    expected = _junit(full, record)
    assert (judged.paths.run_dir / "junit.xml").read_text() == expected
    assert junit_xml(full) != expected  # the comparison is in it
