"""The HTML report: content, escaping, highlighting, CSP, degraded rendering, size.

A case's details (its trials: calls side by side, answers, verdicts, errors) travel as a
packed block that the page's script draws when the case is opened; these tests read the
blocks decoded (tests/e2e/test_browser_report.py checks what the browser draws)."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest
from support.report_page import BASE64, case_blocks, case_details, rows_of
from support.sample_results import XSS_ANSWER, sample_run

from agentflow_eval.models.results import RunResult, RunTotals
from agentflow_eval.report.case_details import UNFINISHED_VERDICTS, unpack_case
from agentflow_eval.report.csp import csp_hash
from agentflow_eval.report.html import render_html, write_html
from agentflow_eval.report.templating import asset
from agentflow_eval.run.stats import wilson_interval


@pytest.fixture(scope="module")
def sample() -> tuple[RunResult, object]:
    return sample_run()


@pytest.fixture(scope="module")
def page(sample: tuple[RunResult, object]) -> str:
    run, _eval_set = sample
    return render_html(run)


class _Elements(HTMLParser):
    """Collects tags with attributes, and the raw text of script and style elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.raw: dict[str, list[str]] = {"script": [], "style": []}
        self._open: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in self.raw:
            self._open = tag
            self.raw[tag].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._open:
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self.raw[self._open][-1] += data


def parse(page: str) -> _Elements:
    parser = _Elements()
    parser.feed(page)
    return parser


def _answers(details: dict[str, object]) -> list[object]:
    return [turn.get("answer") for trial in details["trials"] for turn in trial["turns"]]  # type: ignore[index,union-attr,attr-defined]


# --- security --------------------------------------------------------------------------


def test_agent_answer_with_markup_is_data_never_markup(page: str) -> None:
    assert XSS_ANSWER not in page
    assert "<img" not in page
    # the only script element is the report's own
    assert len(re.findall(r"<script\b", page)) == 1
    # the answer travels in its case's block, as data, exactly as the agent wrote it
    blocks = case_blocks(page)
    assert all(BASE64.fullmatch(block) for block in blocks.values())
    assert XSS_ANSWER in _answers(case_details(page, "html_in_answer"))


def test_tool_results_ids_and_user_text_with_markup_are_escaped(page: str) -> None:
    # the case's summary line (markup) escapes the user's question
    assert "Summarise the &lt;b&gt;reviews&lt;/b&gt; &amp; quote one verbatim." in page
    # its calls (data) keep the markup as text, JSON-quoted as the report shows values
    (row,) = rows_of(case_details(page, "html_in_answer"), trial=0)
    assert row["expected"]["args"] == [["hotel", '"Memmo <Alfama>"']]
    assert row["actual"]["result"] == '"<img src=x onerror=\\"alert(1)\\">"'


def test_case_ids_with_markup_are_escaped_in_the_summary() -> None:
    run, _ = sample_run(cases=1, trials=1)
    case = run.cases[0].model_copy(update={"case_id": '<b id="x">bold</b>'})
    trials = [
        t.model_copy(update={"trial": t.trial.model_copy(update={"case_id": case.case_id})})
        for t in run.trials
    ]
    page = render_html(run.model_copy(update={"cases": [case], "trials": trials}))
    assert '<b id="x">' not in page
    assert 'data-id="&lt;b id=&#34;x&#34;&gt;bold&lt;/b&gt;"' in page
    assert '<span class="id">&lt;b id=&#34;x&#34;&gt;bold&lt;/b&gt;</span>' in page


def test_csp_allows_exactly_the_inline_script_and_style(page: str) -> None:
    elements = parse(page)
    metas = [a for t, a in elements.tags if t == "meta" and a.get("http-equiv")]
    assert len(metas) == 1
    policy = metas[0]["content"] or ""
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'"
    (script,) = elements.raw["script"]
    (style,) = elements.raw["style"]
    assert directives["script-src"] == csp_hash(script)
    assert directives["style-src"] == csp_hash(style)
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    # the policy comes before anything it governs
    order = [t for t, _ in elements.tags]
    assert order.index("meta") < order.index("style") < order.index("script")
    assert order[: order.index("style")].count("meta") >= 2  # charset, then the CSP


def test_the_script_builds_no_markup_from_strings() -> None:
    """The page's script draws run data with text nodes only; none of the ways to turn a
    string into markup or code appears in it."""
    script = str(asset("report.js"))
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "createContextualFragment",
        "DOMParser",
        "eval(",
        "Function(",
        'setAttribute("on',
        "srcdoc",
    ):
        assert sink not in script, sink
    assert "createTextNode" in script and "textContent" in script


def test_no_inline_handlers_or_style_attributes(page: str) -> None:
    for tag, attrs in parse(page).tags:
        assert "style" not in attrs, tag
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)


def test_page_is_self_contained(page: str) -> None:
    for tag, attrs in parse(page).tags:
        for name in ("src", "href"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith(("data:", "#")), (tag, name, value)
    assert "@import" not in page and "@font-face" not in page
    assert not re.search(r"url\((?!data:)", page)


# --- content ---------------------------------------------------------------------------


def test_summary_shows_run_facts(sample: tuple[RunResult, object], page: str) -> None:
    run, _ = sample
    assert run.totals.trials == 30 and run.totals.passed == 15
    assert "<title>Travel agent — nightly · 50% · agentflow-eval</title>" in page
    assert "of 30 trials passed" in page
    assert "95% CI 33–67%" in page
    assert "travel-assistant" in page and "openai/gpt-4o-mini" in page
    assert "2026-11-20 02:30:00 UTC" in page
    assert "15 passed · 12 failed · 3 errored" in page
    assert "SIMULATED model" not in page


def test_simulated_run_carries_a_banner() -> None:
    run, _eval_set = sample_run(simulated=True, cases=2, trials=1)
    page = render_html(run)
    assert 'class="banner" role="alert"><strong>SIMULATED model.</strong>' in page


def test_criteria_table_and_shared_settings(page: str) -> None:
    table = page[page.index('<table class="grid criteria stack">') : page.index("</table>")]
    assert "tool_trajectory_avg_score" in table and "final_response_match_v2" in table
    # settings every trajectory verdict repeats are shown once, beside the criterion
    assert '<span class="muted">match_type</span> IN_ORDER' in table
    assert '<span class="muted">judge_model</span> openai/gpt-4o-mini' in table


def test_cases_carry_state_and_rate_for_filtering(page: str) -> None:
    found = re.findall(r'data-state="(\w+)" data-rate="([0-9.]+)" data-id="(\w+)"', page)
    by_id = {case_id: (state, float(rate)) for state, rate, case_id in found}
    assert by_id["weather_lookup_simple"] == ("passing", 1.0)
    assert by_id["weather_multi_city"] == ("flaky", 0.6)
    assert by_id["currency_conversion"] == ("failing", 0.0)
    assert 'data-filter="not-passing"' in page and 'id="sort"' in page


def test_trial_details_are_not_markup_until_a_case_is_opened(page: str) -> None:
    assert page.count('<details class="case ') == 6
    assert '<details class="trial' not in page and '<table class="calls"' not in page
    blocks = case_blocks(page)
    assert list(blocks) == [
        "weather_lookup_simple",
        "weather_multi_city",
        "flight_search_basic",
        "hotel_booking_two_turns",
        "currency_conversion",
        "html_in_answer",
    ]
    for block in blocks.values():
        details = unpack_case(block)
        assert [t["index"] for t in details["trials"]] == [0, 1, 2, 3, 4]
    assert "<noscript>" in page and "results.json" in page


def test_wrong_arguments_are_one_row_with_the_differing_args_marked(page: str) -> None:
    details = case_details(page, "weather_multi_city")
    trial = details["trials"][1]  # odd trials ask for "London, UK" in metric units
    assert trial["status"] == "failed"
    match, differ = rows_of(details, trial=1)
    assert differ["status"] == "args"
    assert differ["expected"]["args"] == [["location", '"London"', True]]
    assert differ["actual"]["args"] == [
        ["location", '"London, UK"', True],
        ["units", '"metric"', True],
    ]
    assert differ["actual"]["result"] == '"cloudy, 13°C"'
    # the matching call of the same turn is not marked
    assert match["status"] == "match"
    assert match["expected"]["args"] == match["actual"]["args"] == [["location", '"Tokyo"']]
    # a trial that called as expected has only matching rows
    assert [r["status"] for r in rows_of(details, trial=0)] == ["match", "match"]


def test_wrong_tool_shows_a_missing_and_an_unexpected_call(page: str) -> None:
    rows = {row["status"]: row for row in rows_of(case_details(page, "currency_conversion"), 0)}
    assert list(rows) == ["extra", "missing"]
    missing, extra = rows["missing"], rows["extra"]
    assert "actual" not in missing
    assert missing["expected"]["name"] == "convert_currency"
    assert "expected" not in extra
    assert extra["actual"]["name"] == "web_search"


def test_trial_drill_down_shows_answers_verdicts_errors_and_costs(page: str) -> None:
    details = case_details(page, "hotel_booking_two_turns")
    assert details["facts"][0] == "2 passed · 0 failed · 3 errored"
    assert "pass@3 90%" in details["facts"]
    timeout, crash = details["trials"][1], details["trials"][2]
    assert timeout["status"] == "errored" and timeout["why"] == "timeout: no answer within 30 s"
    assert timeout["error"] == {"kind": "timeout", "message": "no answer within 30 s"}
    assert crash["error"]["type"] == "BookingUnavailable"
    assert crash["error"]["traceback"].endswith("BookingUnavailable: 503")
    second = timeout["turns"][1]
    assert second["number"] == 2 and second["unreached"] is True
    assert second["reference"] == "Booked Memmo Alfama for two nights from Dec 3."
    assert "answer" not in second  # no final answer: the trial ended before this turn
    assert [r["status"] for r in second["rows"]] == ["missing"]
    judge = timeout["verdicts"][2]
    assert judge["label"] == "judge: answer agrees with reference"
    assert judge["status"] == "passed"  # its judge said yes
    assert (judge["score"], judge["threshold"], judge["cost"]) == (
        "1.00",
        "0.50",
        "850 ms · $0.00042",
    )
    # judge votes and reasons, one per line, under their invocation
    (key, text), *_ = judge["details"]
    assert key == "invocations"
    assert text.startswith(
        "- invocation_id: hotel_booking_two_turns-1 · valid: true · reason: 3 of 3"
    )
    assert (
        "  votes:\n    - verdict: valid · reasoning: The answer gives the hotel name, as the"
        in text
    )
    # what the judge passed is what the trial did before it stopped: the page says so
    assert timeout["verdicts_note"] == crash["verdicts_note"] == UNFINISHED_VERDICTS
    assert all("verdicts_note" not in t for t in details["trials"] if t["status"] != "errored")
    assert re.fullmatch(r"\d+(\.\d)? m?s · \d[\d,]* tok · \$0\.\d+", timeout["meta"])
    assert timeout["judge_cost"] == "$0.00042"
    failing = case_details(page, "html_in_answer")
    reasons = [v.get("reason") for t in failing["trials"] for v in t["verdicts"]]
    assert "judged invalid: html_in_answer-1" in reasons
    votes = failing["trials"][0]["verdicts"][2]["details"][0][1]
    assert "The reference gives the rooftop view; the answer does not." in votes


def test_an_interval_near_zero_keeps_its_digits_on_the_page() -> None:
    """0 of 1,000 passed: the interval's upper bound is 0.4%, not "0–0%"."""
    run, _ = sample_run(cases=2, trials=1)
    low, high = wilson_interval(0, 1000)
    never = run.cases[0].model_copy(
        update={
            "runs": 1000,
            "rated_runs": 1000,
            "passed": 0,
            "failed": 1000,
            "errored": 0,
            "pass_rate": 0.0,
            "ci_low": low,
            "ci_high": high,
        }
    )
    totals = run.totals.model_copy(
        update={
            "trials": 1000,
            "rated_trials": 1000,
            "passed": 0,
            "pass_rate": 0.0,
            "ci_low": low,
            "ci_high": high,
        }
    )
    page = render_html(run.model_copy(update={"cases": [never], "trials": [], "totals": totals}))
    assert '0/1000</strong> <span class="muted">0% · CI 0–0.4%</span>' in page
    assert "95% CI 0–0.4%" in page
    assert "0/1000 passed (0%, 95% CI 0–0.4%)</title>" in page  # the chart's tooltip


def test_charts_are_inline_svg_with_case_tooltips(page: str) -> None:
    # drawn twice, for a wide page and a narrow one (the stylesheet shows one)
    assert 'class="pass-chart full"' in page and 'class="pass-chart compact"' in page
    assert page.count('class="hist"') == 3
    assert "<title>weather_multi_city: 3/5 passed (60%, 95% CI 23–88%)</title>" in page


def test_write_html_writes_utf8(tmp_path, sample: tuple[RunResult, object]) -> None:  # type: ignore[no-untyped-def]
    run, _eval_set = sample
    path = write_html(run, tmp_path / "out" / "report.html")
    text = path.read_bytes().decode("utf-8")
    assert text.startswith("<!DOCTYPE html>") and "Travel agent — nightly" in text


# --- without the eval set ----------------------------------------------------------------


def test_rerender_from_results_alone_uses_recorded_expectations() -> None:
    run, _ = sample_run()
    without = sample_run(with_expected=False)[0]
    from_results = render_html(RunResult.model_validate_json(run.model_dump_json()))
    assert from_results == render_html(run)
    assert from_results != render_html(without)  # the recorded expectations are shown


def test_without_expectations_falls_back_to_criterion_details() -> None:
    run, _ = sample_run(with_expected=False)
    details = case_details(render_html(run), "weather_multi_city")
    match, differ = rows_of(details, trial=1)
    assert (match["status"], differ["status"]) == ("match", "args")
    assert differ["expected"]["args"] == [["location", '"London"', True]]
    # the reference answer comes from the ROUGE criterion's details
    reference = details["trials"][1]["turns"][0]["reference"]
    assert reference == "Tokyo is clear at 24°C while London is cloudy at 13°C."


def test_without_any_expectation_lists_calls_unjudged() -> None:
    run, _ = sample_run(with_expected=False)
    for result in run.trials:
        result.criteria = [c for c in result.criteria if c.criterion != "tool_trajectory_avg_score"]
    page = render_html(run)
    details = case_details(page, "weather_multi_city")
    for trial in details["trials"]:
        (turn,) = trial["turns"]
        assert turn["unknown"].startswith(
            "No expected tool calls known for this turn (render with the eval set"
        )
        assert [r["status"] for r in turn["rows"]] == ["unknown", "unknown"]
        assert all("expected" not in r for r in turn["rows"])
        assert all(len(arg) == 2 for r in turn["rows"] for arg in r["actual"]["args"])


# --- scale -------------------------------------------------------------------------------


def test_200_cases_by_5_trials_stay_a_lean_page() -> None:
    run, _eval_set = sample_run(cases=200, trials=5)
    page = render_html(run)
    size = len(page.encode("utf-8"))
    assert size < 1_000_000, f"report for 1,000 trials is {size:,} bytes"
    assert page.count('<details class="case') == 200
    blocks = case_blocks(page)
    assert sum(len(unpack_case(b)["trials"]) for b in blocks.values()) == 1000
    # many cases switch the chart to columns; cases with the same result share one (in
    # the chart for a wide page and in the one for a narrow page)
    assert 'class="col s-' in page and 'class="bar s-' not in page
    assert page.count('class="col s-') == 2 * len({(c.passed, c.runs) for c in run.cases})


def test_an_empty_run_and_a_case_without_trials_still_render() -> None:
    run, _ = sample_run(cases=1, trials=1)
    empty = run.model_copy(
        update={"cases": [], "trials": [], "criteria": [], "totals": RunTotals()}
    )
    page = render_html(empty)
    assert page.count('<details class="case') == 0 and "of 0 trials passed" in page
    no_trials = run.model_copy(update={"trials": []})
    no_trials.cases[0] = no_trials.cases[0].model_copy(update={"runs": 0, "passed": 0})
    page = render_html(no_trials)
    assert 'data-state="empty"' in page
    assert case_details(page, run.cases[0].case_id)["trials"] == []


def _summary_of(page: str, case_id: str) -> str:
    start = page.index(f'data-id="{case_id}"')
    return page[start : page.index("</summary>", start)]


_CHIP = re.compile(r'<span class="mean fail[^"]*" data-failed="(\d+)" title="[^"]*">([^<]*) ')


def test_each_case_line_names_what_failed_it_first(
    sample: tuple[RunResult, object], page: str
) -> None:
    """Every criterion that failed some trial, by its whole name (never cut to fit), with
    how many trials, and the trials that did not finish, come first on the case's line;
    the others follow with their mean scores."""
    run, _ = sample
    for case in run.cases:
        summary = html.unescape(_summary_of(page, case.case_id))
        failed = [(str(c.failed), c.label) for c in case.criteria if c.failed]
        if case.errored:
            failed.append((str(case.errored), "errored"))
        assert _CHIP.findall(summary) == failed, case.case_id
        means = summary.index('<span class="means">')
        passing = [c for c in case.criteria if not c.failed]
        for criterion in passing:  # after every failing one
            assert summary.index(f'title="{criterion.label}: mean score', means) > max(
                [summary.index(f">{label} ", means) for _, label in failed], default=0
            )
    hotel = _summary_of(page, "hotel_booking_two_turns")
    assert 'errored <span class="nfail">✗ 3/5</span>' in hotel
    markup = _summary_of(page, "html_in_answer")
    assert 'judge: answer agrees with reference <span class="nfail">✗ 5/5</span>' in markup


def test_each_case_shows_what_its_trials_took(sample: tuple[RunResult, object], page: str) -> None:
    run, _ = sample
    assert "<span>Per trial: median (p90)</span>" in page
    case = run.cases[0]
    summary = _summary_of(page, case.case_id)
    assert case.efficiency is not None
    tokens = case.efficiency.total_tokens
    assert f"<i>tokens</i> {tokens.median:,.4g} (p90 {tokens.p90:,.4g})" in summary
    for what in ("cost", "model calls", "tool calls", "latency"):
        assert f'data-fig="{what}"' in summary
    # the latency strip: one dot per trial, the median's interval as a band
    strip = summary[summary.index('<svg class="strip"') :]
    assert strip.count("<circle") == case.runs
    assert 'class="band"' in strip and "trial latency: median" in strip


def test_the_run_facts_show_agent_and_judge_spend(
    sample: tuple[RunResult, object], page: str
) -> None:
    run, _ = sample
    totals = run.totals
    assert totals.trial_latency_ms is not None
    assert f"{totals.usage.total_tokens:,} · ${totals.usage.cost_usd:.4f}" in page
    assert "<dt>Trial latency</dt>" in page
