"""The report in a real browser (headless Chromium): agent answers carrying script
payloads show as text and run nothing; the report's own script runs and draws a case's
details when it is opened (calls side by side, answers, verdicts, errors); filtering and
sorting work; chart text does not collide; a 10,000-trial report opens quickly.

Every "nothing ran" check has a control that shows the same payload *does* run when the
defence is absent, so the checks cannot pass by not looking.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.chromium import Chromium, chromium_binary, png_size
from support.devtools import DevTools, LoadFigures, Tab
from support.report_page import case_blocks
from support.sample_results import XSS_ANSWER, sample_run, write_run_dir_streamed

from agentflow_eval.models.results import RunResult
from agentflow_eval.report.case_details import UNFINISHED_VERDICTS, unpack_case
from agentflow_eval.report.html import render_html

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
DOCS_SCREENSHOT = REPO / "docs" / "report-screenshot.png"
TITLE = "<title>Travel agent — nightly · 50% · agentflow-eval</title>"
INJECTED = (
    "<script>document.body.setAttribute('data-injected','script')</script>"
    "<img src=x onerror=\"document.body.setAttribute('data-injected','img')\">"
)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    yield Chromium(chromium_binary(), tmp_path_factory.mktemp("chromium-profile"))


@pytest.fixture(scope="module")
def devtools(browser: Chromium) -> Iterator[DevTools]:
    with browser.devtools() as tools:
        yield tools


@pytest.fixture(scope="module")
def report_html() -> str:
    run, _eval_set = sample_run()
    return render_html(run)


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory, report_html: str) -> Path:
    return write(tmp_path_factory.mktemp("sample") / "report.html", report_html)


def write(path: Path, html: str) -> Path:
    path.write_text(html, encoding="utf-8")
    return path


def body_tag(dom: str) -> str:
    match = re.search(r"<body[^>]*>", dom)
    assert match, dom[:500]
    return match.group(0)


# --- driving the page ------------------------------------------------------------------

_OPEN_CASE = """(async (caseId, which) => {
  const pause = (ms) => new Promise((done) => setTimeout(done, ms));
  const item = Array.from(document.querySelectorAll("#cases > details.case"))
    .find((candidate) => candidate.dataset.id === caseId);
  if (!item) { throw new Error("no case " + caseId); }
  if (!item.open) { item.querySelector(":scope > summary").click(); }
  const body = item.querySelector(".case-body");
  for (let i = 0; i < 500 && !body.hasAttribute("data-drawn"); i += 1) { await pause(10); }
  for (const trial of body.querySelectorAll(":scope > details.trial")) {
    if (!trial.open && (which === "all" || !trial.classList.contains("t-passed"))) {
      trial.querySelector(":scope > summary").click();
    }
  }
  await pause(300);  // the toggle events run as tasks; a payload's onerror would fire too
  return body.getAttribute("data-drawn");
})(%s, %s)"""

_DESCRIBE_CASE = """((caseId) => {
  const item = document.querySelector('#cases > details.case[data-id="' + caseId + '"]');
  const text = (node) => node ? node.textContent : null;
  const all = (root, selector) => Array.from(root.querySelectorAll(selector));
  return {
    facts: all(item, ".facts-line > span").map(text),
    trials: all(item, ".case-body > details.trial").map((trial) => ({
      cls: trial.className,
      open: trial.open,
      summary: text(trial.querySelector(":scope > summary")),
      error: text(trial.querySelector(".error")),
      turns: all(trial, ".turn").map((turn) => ({
        head: text(turn.querySelector(".turn-head")),
        user: text(turn.querySelector(".user")),
        warnings: all(turn, ".warn-line").map(text),
        notes: all(turn, "p.muted.small").map(text),
        rows: all(turn, "table.calls > tbody > tr").map((row) => ({
          cls: row.className,
          cells: all(row, ":scope > td").map(text),
          diffs: all(row, ":scope > td").map((cell) => all(cell, ".arg.diff").map(text)),
        })),
        answer: text(turn.querySelector(".answer:not(.ref) pre")),
        noAnswer: text(turn.querySelector(".answer:not(.ref) p.none")),
        reference: text(turn.querySelector(".answer.ref pre")),
      })),
      verdicts: all(trial, "table.verdicts > tbody > tr").map((row) => ({
        cls: row.className,
        cells: all(row, ":scope > td").map(text),
      })),
    })),
  };
})(%s)"""


def open_case(tab: Tab, case_id: str, which: str = "not-passing") -> dict[str, Any]:
    """Open a case as a person would (a click on its line), open its trials (``all`` or
    the ones that did not pass), and describe what the page then shows."""
    drawn = tab.evaluate(_OPEN_CASE % (json.dumps(case_id), json.dumps(which)))
    assert drawn == "yes", f"case {case_id} was not drawn ({drawn})"
    described: dict[str, Any] = tab.evaluate(_DESCRIBE_CASE % json.dumps(case_id))
    return described


# --- safety ----------------------------------------------------------------------------


def test_control_the_payload_runs_when_not_escaped(browser: Chromium, tmp_path: Path) -> None:
    page = write(
        tmp_path / "control.html",
        f"<!DOCTYPE html><html><head><title>control</title></head><body>{XSS_ANSWER}</body></html>",
    )
    dom = browser.dump_dom(page)
    assert "data-pwned=" in body_tag(dom)
    assert "<title>PWNED-" in dom


def test_the_page_loads_with_its_script_running(browser: Chromium, report_file: Path) -> None:
    dom = browser.dump_dom(report_file)
    assert TITLE in dom
    # the report's own script did run: it revealed the controls and counted the cases
    assert 'id="controls" hidden' not in dom and 'id="controls"' in dom
    assert '<span class="muted" id="shown">showing 6 of 6</span>' in dom


def test_agent_answer_with_payloads_shows_as_text_and_runs_nothing(
    devtools: DevTools, report_file: Path
) -> None:
    tab = devtools.open_tab()
    tab.load(report_file)
    case = open_case(tab, "html_in_answer", "all")
    assert len(case["trials"]) == 5
    for trial in case["trials"]:
        (turn,) = trial["turns"]
        assert turn["answer"] == XSS_ANSWER  # shown as the agent wrote it, as text
        (row,) = turn["rows"]
        assert '<img src=x onerror=\\"alert(1)\\">' in row["cells"][1]
        assert 'hotel="Memmo <Alfama>"' in row["cells"][0]
    page = tab.evaluate(
        "({title: document.title, images: document.images.length, scripts:"
        " document.scripts.length, pwned: document.body.getAttribute('data-pwned')})"
    )
    assert page == {
        "title": "Travel agent — nightly · 50% · agentflow-eval",
        "images": 0,
        "scripts": 1,
        "pwned": None,
    }


def test_csp_stops_markup_that_escaping_would_have_missed(
    browser: Chromium, tmp_path: Path, report_html: str
) -> None:
    anchor = '<div id="cases">'
    assert anchor in report_html
    injected = report_html.replace(anchor, anchor + INJECTED, 1)
    dom = browser.dump_dom(write(tmp_path / "injected.html", injected))
    assert "data-injected" not in body_tag(dom)
    assert "showing 6 of 6" in dom  # the hashed script still runs

    # control: the same page without its policy runs the injected markup
    without_csp = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", injected)
    assert without_csp != injected
    dom = browser.dump_dom(write(tmp_path / "no-csp.html", without_csp))
    assert "data-injected=" in body_tag(dom)


# --- what opening a case shows -----------------------------------------------------------


def test_an_opened_case_shows_calls_side_by_side_with_mismatches_marked(
    devtools: DevTools, report_file: Path
) -> None:
    tab = devtools.open_tab()
    tab.load(report_file)
    case = open_case(tab, "weather_multi_city")
    assert case["facts"][0] == "3 passed · 2 failed · 0 errored"
    statuses = [t["cls"] for t in case["trials"]]
    assert statuses == ["trial t-passed", "trial t-failed"] * 2 + ["trial t-passed"]
    assert [t["open"] for t in case["trials"]] == [False, True, False, True, False]
    failed = case["trials"][1]
    assert failed["summary"].startswith("failed Trial 2 trajectory IN_ORDER: 0.50")
    (turn,) = failed["turns"]
    assert turn["head"].startswith("Turn 1 weather_multi_city-1 trajectory 0.50")
    assert turn["user"] == "User What's the weather in Tokyo and London?"
    match, differ = turn["rows"]
    assert match["cls"] == "r-match" and match["diffs"] == [[], [], []]
    assert match["cells"][0] == 'get_weather(location="Tokyo")'
    assert differ["cls"] == "r-args"
    assert differ["cells"][0] == 'get_weather(location="London")'
    assert differ["cells"][1].startswith('get_weather(location="London, UK", units="metric")')
    assert differ["cells"][2] == "arguments differ"
    assert differ["diffs"] == [
        ['location="London"'],
        ['location="London, UK"', 'units="metric"'],
        [],
    ]
    assert turn["answer"] == "Tokyo: clear, 24°C. London, UK: cloudy, 13°C."
    assert turn["reference"] == "Tokyo is clear at 24°C while London is cloudy at 13°C."
    verdicts = [v["cells"][:3] for v in failed["verdicts"]]
    assert verdicts[0] == ["trajectory IN_ORDER", "failed", "0.50 / 1.00"]
    assert verdicts[2] == ["judge: answer agrees with reference", "passed", "1.00 / 0.50"]
    assert (
        "invocation 1: 1/2 expected call(s) matched among 2 made"
        in failed["verdicts"][0]["cells"][3]
    )


def test_an_opened_case_shows_errors_and_turns_never_reached(
    devtools: DevTools, report_file: Path
) -> None:
    tab = devtools.open_tab()
    tab.load(report_file)
    case = open_case(tab, "hotel_booking_two_turns")
    timeout, crash = case["trials"][1], case["trials"][2]
    assert timeout["summary"].startswith("errored Trial 2 timeout: no answer within 30 s")
    assert timeout["error"] == "timeout: no answer within 30 s"
    assert crash["error"].startswith("exception BookingUnavailable: book_hotel: HTTP 503")
    assert crash["error"].endswith("BookingUnavailable: 503")  # the traceback, folded
    second = timeout["turns"][1]
    assert second["warnings"] == ["The trial ended before this turn."]
    assert second["noAnswer"] == "no final answer"
    assert second["reference"] == "Booked Memmo Alfama for two nights from Dec 3."
    (missing,) = second["rows"]
    assert missing["cls"] == "r-missing"
    assert missing["cells"] == [
        'book_hotel(hotel="Memmo Alfama", nights=2)',
        "not called",
        "not called",
    ]


_VERDICTS_OF_TRIALS = """((caseId) => Array.from(document.querySelectorAll(
    '#cases > details.case[data-id="' + caseId + '"] .case-body > details.trial')).map((trial) => {
  const table = trial.querySelector("table.verdicts");
  const before = table && table.previousElementSibling;
  return {
    status: trial.className,
    note: before && before.matches(".verdicts-note") ? before.textContent : null,
    passed: table ? Array.from(table.querySelectorAll(".p-passed")).map((pill) => ({
      color: getComputedStyle(pill).color,
    })) : [],
  };
}))(%s)"""


def test_a_trial_that_errored_says_its_passing_verdicts_do_not_make_it_pass(
    devtools: DevTools, report_file: Path
) -> None:
    """A crashed trial's criteria judged what it did before it stopped; one of them
    passing must not read as the trial passing beside its error."""
    tab = devtools.open_tab()
    tab.load(report_file)
    open_case(tab, "hotel_booking_two_turns", "all")
    trials = tab.evaluate(_VERDICTS_OF_TRIALS % json.dumps("hotel_booking_two_turns"))
    errored = [t for t in trials if "t-errored" in t["status"]]
    finished = [t for t in trials if "t-errored" not in t["status"]]
    assert errored and finished
    assert all(t["note"] == UNFINISHED_VERDICTS for t in errored), errored
    assert any(t["passed"] for t in errored)  # the judge passed what it saw
    assert all(t["note"] is None for t in finished)
    muted = {p["color"] for t in errored for p in t["passed"]}
    green = {p["color"] for t in finished for p in t["passed"]}
    assert muted and green and muted.isdisjoint(green)


def test_filtering_sorting_and_a_link_to_a_case_still_work(
    devtools: DevTools, report_file: Path
) -> None:
    tab = devtools.open_tab()
    tab.load(report_file)
    open_case(tab, "weather_multi_city")
    shown = tab.evaluate(
        """(() => {
          document.querySelector('button[data-filter="failing"]').click();
          const visible = Array.from(document.querySelectorAll("#cases > details.case"))
            .filter((item) => !item.hidden).map((item) => item.dataset.id);
          document.querySelector('button[data-filter="all"]').click();
          const sort = document.getElementById("sort");
          sort.value = "rate-asc";
          sort.dispatchEvent(new Event("change"));
          const order = Array.from(document.querySelectorAll("#cases > details.case"))
            .map((item) => [item.dataset.id, parseFloat(item.dataset.rate)]);
          return {visible, order, shown: document.getElementById("shown").textContent};
        })()"""
    )
    assert shown["visible"] == ["currency_conversion", "html_in_answer"]
    rates = [rate for _, rate in shown["order"]]
    assert rates == sorted(rates) and rates[0] == 0.0 and rates[-1] == 1.0
    # ties keep the eval set's order
    assert [case_id for case_id, _ in shown["order"]][:2] == [
        "currency_conversion",
        "html_in_answer",
    ]
    assert shown["shown"] == "showing 6 of 6"
    # the opened case kept what was drawn while it moved
    moved = tab.evaluate(_DESCRIBE_CASE % json.dumps("weather_multi_city"))
    assert moved["trials"][1]["turns"][0]["rows"][1]["cls"] == "r-args"

    # a link to a case opens it with the trials that did not pass
    tab = devtools.open_tab()
    tab.load(f"{report_file.resolve().as_uri()}#case-3")
    for _ in range(100):
        if tab.evaluate("document.querySelectorAll('#case-3 .trial-body').length") == 3:
            break
        time.sleep(0.05)
    linked = tab.evaluate(_DESCRIBE_CASE % json.dumps("hotel_booking_two_turns"))
    assert [t["open"] for t in linked["trials"]] == [False, True, True, False, True]


def test_a_block_that_cannot_be_read_says_so_in_its_case(
    devtools: DevTools, tmp_path: Path, report_html: str
) -> None:
    block = case_blocks(report_html)["currency_conversion"]
    damaged = report_html.replace(block, "eJzLSM3JyQcABiwCFQ" + "A" * 40, 1)
    assert damaged != report_html
    tab = devtools.open_tab()
    tab.load(write(tmp_path / "damaged.html", damaged))
    drawn = tab.evaluate(_OPEN_CASE % (json.dumps("currency_conversion"), json.dumps("all")))
    assert drawn == "failed"
    message = tab.evaluate(
        "document.querySelector('details.case[data-id=\"currency_conversion\"] .case-body')"
        ".textContent"
    )
    assert message.startswith("The details of this case could not be read: ")
    # the other cases still open
    assert open_case(tab, "weather_multi_city")["trials"]


def test_screenshot_of_a_realistic_report(
    devtools: DevTools, tmp_path: Path, report_file: Path
) -> None:
    tab = devtools.open_tab(width=1300, height=2600)
    tab.load(report_file)
    open_case(tab, "weather_multi_city")
    tab.evaluate("window.scrollTo(0, 0)")
    shot = tab.screenshot(tmp_path / "report.png")
    assert png_size(shot) == (1300, 2600)
    assert shot.stat().st_size > 50_000  # a rendered page, not a blank one
    if os.environ.get("AGENTFLOW_UPDATE_DOCS_SCREENSHOT") == "1":
        shutil.copyfile(shot, DOCS_SCREENSHOT)


# --- an 800-pixel-wide window ------------------------------------------------------------

NARROW = 800
MIN_CHART_TEXT_PX = 9.95
"""The smallest chart text allowed on screen (about 10 px; CSS pixels)."""

_LAYOUT_AT_WIDTH = """(() => {
  const width = document.documentElement.clientWidth;
  const scrolls = (node) => ["auto", "scroll"].includes(getComputedStyle(node).overflowX);
  const boxOf = (node) => {
    for (let up = node.parentElement; up; up = up.parentElement) {
      if (scrolls(up)) { return up; }
    }
    return null;
  };
  const outside = [];
  for (const node of document.querySelectorAll("body *")) {
    const rect = node.getBoundingClientRect();
    if (rect.width === 0 || rect.right <= width + 0.5) { continue; }
    const box = boxOf(node);
    if (!box || box.getBoundingClientRect().right > width + 0.5) {
      outside.push(`${node.tagName.toLowerCase()}.${node.getAttribute("class")} ${rect.right}`);
    }
  }
  const table = document.querySelector("table.grid.criteria");
  const tableBox = boxOf(table);
  // the text of the charts drawn (of a chart's two sizes, the stylesheet hides one)
  const drawn = (svg) => svg.getBoundingClientRect().width > 0;
  const shown = Array.from(document.querySelectorAll("svg text"))
    .filter((text) => drawn(text.ownerSVGElement));
  const texts = shown.map((text) => {
    const svg = text.ownerSVGElement;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return { text: text.textContent, px: parseFloat(getComputedStyle(text).fontSize) * scale };
  });
  return {
    width,
    pageWidth: document.documentElement.scrollWidth,
    outside,
    table: { width: table.getBoundingClientRect().width,
             box: tableBox && tableBox.getBoundingClientRect().width,
             boxScrolls: tableBox && tableBox.scrollWidth > tableBox.clientWidth },
    texts,
  };
})()"""


def test_the_report_at_800_pixels_wide(
    devtools: DevTools, tmp_path: Path, report_file: Path
) -> None:
    """Nothing sticks out of an 800-pixel window: the criteria table stacks its figures
    (a block per criterion, each labelled) and fits its box, and every chart label is
    drawn at about 10 px or larger (a narrow page gets a chart drawn narrow rather than
    a wide one shrunk). The screenshot is the test's artifact. (Every page at three
    widths: tests/e2e/test_page_widths.py.)"""
    tab = devtools.open_tab(width=NARROW, height=2400)
    tab.load(report_file)
    open_case(tab, "weather_multi_city", "all")
    layout = tab.evaluate(_LAYOUT_AT_WIDTH)
    shot = tab.screenshot(tmp_path / "report-800px.png")
    print(f"\nscreenshot at {NARROW} px: {shot}")
    assert layout["width"] == NARROW
    assert layout["pageWidth"] <= NARROW, layout["outside"]
    assert layout["outside"] == []
    table = layout["table"]
    assert table["box"] is not None and table["box"] <= NARROW
    assert table["width"] <= table["box"] and not table["boxScrolls"], table
    assert len(layout["texts"]) > 20  # the pass chart and the histograms were measured
    small = [t for t in layout["texts"] if t["px"] < MIN_CHART_TEXT_PX]
    assert small == [], small


# --- a 10,000-trial report ---------------------------------------------------------------

LARGE_CASES = 2000
LARGE_TRIALS = 5
SIZE_LIMIT = 10_000_000
LOAD_LIMIT_MS = 5000  # generous: the machine is shared; RESULTS.md records the real figures


@dataclass
class LargeReport:
    path: Path
    run: RunResult
    figures: LoadFigures


@pytest.fixture(scope="module")
def large_report(
    browser: Chromium, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LargeReport]:
    run, eval_set = sample_run(cases=LARGE_CASES, trials=LARGE_TRIALS, multiline=True)
    assert run.totals.trials == 10_000 and len(run.criteria) == 3
    # written as the report stage writes it: from judged.jsonl, case by case
    path = write_run_dir_streamed(tmp_path_factory.mktemp("large"), run, eval_set) / "report.html"
    # a browser of its own: the load is timed without other tabs around
    with browser.devtools() as tools:
        figures = tools.open_tab().load(path)
    print(
        f"\n10,000-trial report: {path.stat().st_size / 1e6:.2f} MB, {figures.nodes:,} nodes, "
        f"load event {figures.load_event_ms:.0f} ms (main thread CPU "
        f"{figures.main_thread_cpu_ms:.0f} ms), renderer RSS "
        f"{figures.renderer_rss_mib or 0:.0f} MiB, JS heap {figures.js_heap_used_mib:.1f} MiB"
    )
    yield LargeReport(path, run, figures)


def test_a_10000_trial_report_is_small_and_loads_quickly(large_report: LargeReport) -> None:
    size = large_report.path.stat().st_size
    assert size < SIZE_LIMIT, f"{size:,} bytes"
    figures = large_report.figures
    assert figures.load_event_ms < LOAD_LIMIT_MS, figures
    # one line per case, not the trials: far from the 1.9 million nodes drawn before
    assert figures.nodes < 150_000, figures
    page = large_report.path.read_text(encoding="utf-8")
    assert page.count('<details class="case ') == LARGE_CASES
    assert '<details class="trial' not in page


def test_a_case_of_the_10000_trial_report_opens_with_its_details(
    devtools: DevTools, large_report: LargeReport
) -> None:
    tab = devtools.open_tab()
    tab.load(large_report.path)
    case_id = "weather_multi_city_1999"  # the last case of the page
    case = open_case(tab, case_id, "all")
    trials = sorted(
        (t for t in large_report.run.trials if t.trial.case_id == case_id),
        key=lambda t: t.trial.trial_index,
    )
    assert len(case["trials"]) == len(trials) == LARGE_TRIALS
    for shown, result in zip(case["trials"], trials, strict=True):
        assert shown["cls"] == f"trial t-{result.status}"
        (turn,) = shown["turns"]
        (recorded,) = result.trial.turns
        assert turn["answer"] == recorded.final_response
        assert "\n" in turn["answer"]  # multi-line answers keep their lines
        called = [row["cells"][1].split("(")[0] for row in turn["rows"]]
        assert called == [call.name for call in recorded.tool_calls]
        verdicts = [(v["cells"][0], v["cells"][1]) for v in shown["verdicts"]]
        assert verdicts == [
            (v.label or v.criterion, v.status.replace("_", " ")) for v in result.criteria
        ]
    # what the page drew is what its block holds
    block = unpack_case(case_blocks(large_report.path.read_text(encoding="utf-8"))[case_id])
    for shown, packed in zip(case["trials"], block["trials"], strict=True):
        assert shown["summary"].endswith(packed["meta"])
    assert case["facts"] == block["facts"]


_TEXT_BOXES = """(() => {
  const box = (node) => {
    const b = node.getBBox();
    return [b.x, b.y, b.x + b.width, b.y + b.height];
  };
  return Array.from(document.querySelectorAll("svg.hist")).map((svg) => ({
    title: box(svg.querySelector(".htitle")),
    caption: box(svg.querySelectorAll(".tick")[0]),
    counts: Array.from(svg.querySelectorAll(".bin .count")).map(box),
    width: svg.viewBox.baseVal.width,
  }));
})()"""


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_chart_text_of_a_10000_trial_report_does_not_collide(
    devtools: DevTools, large_report: LargeReport
) -> None:
    tab = devtools.open_tab()
    tab.load(large_report.path)
    histograms = tab.evaluate(_TEXT_BOXES)
    assert len(histograms) == 3
    for hist in histograms:
        assert not _overlap(hist["title"], hist["caption"]), hist
        assert hist["title"][2] <= hist["width"] and hist["caption"][2] <= hist["width"]
        counts = sorted(hist["counts"])
        assert counts, hist
        for left, right in itertools.pairwise(counts):
            assert left[2] < right[0], f"count labels touch: {left} {right}"
        for count in counts:
            assert not _overlap(count, hist["caption"]), hist
