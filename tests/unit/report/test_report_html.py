"""The HTML report: content, escaping, highlighting, CSP, degraded rendering, size."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from support.sample_results import XSS_ANSWER, sample_run

from agentflow_eval.models.results import RunResult, RunTotals
from agentflow_eval.report.csp import csp_hash
from agentflow_eval.report.html import render_html, write_html


@pytest.fixture(scope="module")
def sample() -> tuple[RunResult, object]:
    return sample_run()


@pytest.fixture(scope="module")
def page(sample: tuple[RunResult, object]) -> str:
    run, eval_set = sample
    return render_html(run, eval_set)  # type: ignore[arg-type]


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


def _case_block(page: str, case_id: str) -> str:
    start = page.index(f'data-id="{case_id}"')
    end = page.find('<details class="case', start)
    return page[start : end if end != -1 else len(page)]


# --- security --------------------------------------------------------------------------


def test_agent_answer_with_markup_is_escaped_text(page: str) -> None:
    assert XSS_ANSWER not in page
    assert "&lt;script&gt;document.title=&#34;PWNED-SCRIPT&#34;" in page
    assert "&lt;img src=x onerror=" in page
    assert "<img" not in page
    # the only script element is the report's own
    assert len(re.findall(r"<script\b", page)) == 1


def test_tool_results_and_ids_with_markup_are_escaped(page: str) -> None:
    # the payload case's tool result and argument hold markup too
    assert r"&lt;img src=x onerror=\&#34;alert(1)\&#34;&gt;" in page  # JSON-quoted
    assert "Memmo &lt;Alfama&gt;" in page
    assert "Summarise the &lt;b&gt;reviews&lt;/b&gt;" in page


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
    run, eval_set = sample_run(simulated=True, cases=2, trials=1)
    page = render_html(run, eval_set)
    assert 'class="banner" role="alert"><strong>SIMULATED model.</strong>' in page


def test_criteria_table_and_shared_settings(page: str) -> None:
    table = page[page.index('<table class="grid criteria">') : page.index("</table>")]
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


def test_wrong_arguments_are_one_row_with_the_differing_args_marked(page: str) -> None:
    block = _case_block(page, "weather_multi_city")
    row = block[block.index('<tr class="r-args">') :]
    row = row[: row.index("</tr>")]
    expected, actual = row.split("</td>", 1)
    diff = '<span class="arg diff"><span class="k">{}</span>=<span class="v">&#34;{}&#34;'
    assert diff.format("location", "London") in expected
    assert diff.format("location", "London, UK") in actual
    assert '<span class="arg diff"><span class="k">units</span>' in actual
    assert "arguments differ" in row
    # the matching call of the same turn is not marked
    assert '<tr class="r-match">' in block


def test_wrong_tool_shows_a_missing_and_an_unexpected_call(page: str) -> None:
    block = _case_block(page, "currency_conversion")
    assert '<tr class="r-missing">' in block and '<tr class="r-extra">' in block
    missing = block[block.index('<tr class="r-missing">') :]
    assert missing.index("convert_currency") < missing.index("not called")


def test_trial_drill_down_shows_answers_verdicts_errors_and_costs(page: str) -> None:
    block = _case_block(page, "hotel_booking_two_turns")
    assert "Turn 2" in block
    assert "The trial ended before this turn." in block
    assert "timeout: no answer within 30 s" in block
    assert "BookingUnavailable: 503" in block  # the traceback
    assert "The reference gives the hotel name; the answer" not in block  # its judge said yes
    # judge votes and reasons, one per line, under their invocation
    votes = "votes:\n    - verdict: valid · reasoning: The answer gives the hotel name, as the"
    assert "- invocation_id: hotel_booking_two_turns-1 · valid: true · reason: 3 of 3" in block
    assert votes in block
    assert "Booked Memmo Alfama for two nights from Dec 3." in block  # reference
    assert re.search(r"\d[\d,]* tok · \$0\.\d+", block)
    failing = _case_block(page, "html_in_answer")
    assert "The reference gives the rooftop view; the answer does not." in failing


def test_charts_are_inline_svg_with_case_tooltips(page: str) -> None:
    assert 'class="pass-chart"' in page and page.count('class="hist"') == 3
    assert "<title>weather_multi_city: 3/5 passed (60%, 95% CI 23–88%)</title>" in page


def test_write_html_writes_utf8(tmp_path, sample: tuple[RunResult, object]) -> None:  # type: ignore[no-untyped-def]
    run, eval_set = sample
    path = write_html(run, tmp_path / "out" / "report.html", eval_set)  # type: ignore[arg-type]
    text = path.read_bytes().decode("utf-8")
    assert text.startswith("<!DOCTYPE html>") and "Travel agent — nightly" in text


# --- without the eval set ----------------------------------------------------------------


def test_rerender_from_results_alone_uses_recorded_expectations() -> None:
    run, eval_set = sample_run()
    with_set = render_html(run, eval_set)
    from_results = render_html(RunResult.model_validate_json(run.model_dump_json()))
    assert from_results == with_set


def test_without_expectations_falls_back_to_criterion_details() -> None:
    run, _ = sample_run(with_expected=False)
    page = render_html(run)
    block = _case_block(page, "weather_multi_city")
    assert '<tr class="r-args">' in block and 'class="arg diff"' in block
    # the reference answer comes from the ROUGE criterion's details
    assert "Tokyo is clear at 24°C while London is cloudy at 13°C." in block


def test_without_any_expectation_lists_calls_unjudged() -> None:
    run, _ = sample_run(with_expected=False)
    for result in run.trials:
        result.criteria = [c for c in result.criteria if c.criterion != "tool_trajectory_avg_score"]
    page = render_html(run)
    block = _case_block(page, "weather_multi_city")
    assert '<tr class="r-unknown">' in block
    assert 'class="arg diff"' not in block and "r-missing" not in block
    assert "No expected tool calls known for this turn (render with the eval set" in block


# --- scale -------------------------------------------------------------------------------


def test_200_cases_by_5_trials_stay_a_lean_page() -> None:
    run, eval_set = sample_run(cases=200, trials=5)
    page = render_html(run, eval_set)
    size = len(page.encode("utf-8"))
    assert size < 5_000_000, f"report for 1,000 trials is {size:,} bytes"
    assert page.count('<details class="case') == 200
    assert page.count('<details class="trial') == 1000
    # many cases switch the chart to one column per case
    assert 'class="col s-' in page and 'class="bar s-' not in page


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
    assert 'data-state="empty"' in page and "No trials recorded for this case." in page
