"""The pages a person reads fit a phone (375 px), a narrow window (800 px) and a laptop
(1280 px), in headless Chromium.

At each width the page is measured where it is drawn: no element reaches past the
window's edge (left or right), even inside a box that would scroll or clip, so the page
never scrolls sideways and nothing is cut off; chart text stays about 10 px or larger.
On the report, each case that did not pass shows in its first line (its summary, without
a click) which criteria failed it (each by its whole name, with how many trials; trials
that did not finish as ``errored``) and its pass rate, as text drawn inside the window
and clipped by nothing; a case opened with all its trials fits too. The pages are a
run's report, what ``agentflow-eval view --serve`` serves (the list of runs, an eval
set's history, a run's report), a published eval set's index and explorer, and the
trend page a real ``agentflow-eval traces score`` publishes for production traces. A
screenshot of every page at every width is the tests' artifact: each is saved in the
test's temporary folder, its path printed and recorded as a property of the test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.chromium import Chromium, chromium_binary, png_size
from support.devtools import DevTools, Tab
from support.explorer_runs import three_nights
from support.sample_results import sample_run, write_output_folder, write_run_dir
from support.served_view import served_output_folder

from agentflow_eval.models.results import CaseResult, RunResult
from agentflow_eval.publish.publisher import publish_run, run_folder
from agentflow_eval.report.formats import format_pct
from agentflow_eval.report.html import render_html

pytestmark = pytest.mark.e2e

WIDTHS = (375, 800, 1280)
HEIGHT = 1400
SLACK_PX = 1
"""Sub-pixel rounding a layout may show at an edge."""

ScreenshotRecorder = Any


@pytest.fixture(scope="module")
def devtools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevTools]:
    browser = Chromium(chromium_binary(), tmp_path_factory.mktemp("chromium-profile"))
    with browser.devtools() as tools:
        yield tools


@pytest.fixture(scope="module")
def sample() -> RunResult:
    run, _ = sample_run()
    return run


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory, sample: RunResult) -> Path:
    page = tmp_path_factory.mktemp("report") / "report.html"
    page.write_text(render_html(sample), encoding="utf-8")
    return page


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address ``agentflow-eval view --serve`` (a real subprocess) serves an output
    folder of runs at."""
    output = tmp_path_factory.mktemp("served") / "eval-results"
    write_output_folder(output)
    with served_output_folder(output) as address:
        yield address


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder three nights of one eval set were published to: its index (with the
    trend and the cases over the runs) and its explorer."""
    root = tmp_path_factory.mktemp("published")
    target = root / "published"
    for run in three_nights():
        folder = write_run_dir(root / "runs" / run_folder(run), run)
        outcome = publish_run(folder, target)
        assert outcome.published, outcome.message
    return target / "travel_agent_nightly"


@pytest.fixture(scope="module")
def traces_published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The eval set ``agentflow-eval traces score`` (a real subprocess) published the
    example production traces to: two agent versions, the second a drop."""
    root = tmp_path_factory.mktemp("traces")
    examples = Path(__file__).resolve().parents[2] / "examples" / "traces"
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "agentflow-eval"),
            *("traces", "score", str(examples / "otel")),
            *("--config", str(examples / "traces_config.json"), "--no-prefect"),
            *("--output", str(root / "out"), "--publish-to", str(root / "published")),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return root / "published" / "traces-otel"


# --- measuring in the page ---------------------------------------------------------------

_OVERFLOW = """((slack) => {
  const width = window.innerWidth;
  const classes = (node) => (node.getAttribute("class") || "").trim().split(/\\s+/).filter(Boolean);
  const name = (node) => [node.tagName.toLowerCase() + (node.id ? "#" + node.id : ""),
    ...classes(node)].join(".");
  const outside = [];
  for (const node of document.querySelectorAll("body, body *")) {
    const rect = node.getBoundingClientRect();
    if (rect.width === 0 && rect.height === 0) { continue; }
    if (rect.right > width + slack || rect.left < -slack) {
      outside.push(name(node) + " [" + Math.round(rect.left) + ", " + Math.round(rect.right) + "]");
    }
  }
  return {width, pageWidth: document.documentElement.scrollWidth, outside: outside.slice(0, 40)};
})"""


def assert_fits(tab: Tab, what: str) -> None:
    """No element of the page outside the window, not even in a box that scrolls."""
    layout: dict[str, Any] = tab.evaluate(call(_OVERFLOW, SLACK_PX))
    width = layout["width"]
    problems = [f"outside the window: {entry}" for entry in layout["outside"]]
    if layout["pageWidth"] > width:
        problems.append(f"the page scrolls sideways ({layout['pageWidth']} px wide)")
    assert problems == [], f"{what} at {width} px:\n" + "\n".join(problems)


MIN_CHART_TEXT_PX = 9.95
"""The smallest chart text allowed on screen (about 10 px): a chart is drawn for the
window's width rather than shrunk with it."""

_CHART_TEXT = """(() => Array.from(document.querySelectorAll("svg text"))
  .filter((text) => text.ownerSVGElement.getBoundingClientRect().width > 0)
  .map((text) => {
    const svg = text.ownerSVGElement;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return {text: text.textContent, px: parseFloat(getComputedStyle(text).fontSize) * scale};
  }))()"""


def assert_chart_text_readable(tab: Tab, what: str, at_least: int) -> None:
    texts: list[dict[str, Any]] = tab.evaluate(_CHART_TEXT)
    assert len(texts) >= at_least, f"{what}: {len(texts)} chart texts drawn"
    small = [t for t in texts if t["px"] < MIN_CHART_TEXT_PX]
    assert small == [], f"{what}: chart text smaller than about 10 px: {small}"


def screenshot(
    tab: Tab, folder: Path, name: str, width: int, record_property: ScreenshotRecorder
) -> Path:
    """The whole page (its top 6,000 pixels) as the window of ``width`` draws it."""
    height = int(tab.evaluate("document.documentElement.scrollHeight"))
    shot = tab.screenshot(folder / f"{name}-{width}px.png", full_height=min(height, 6000))
    assert png_size(shot)[0] == width
    print(f"\nscreenshot of {name} at {width} px: {shot}")
    record_property(f"screenshot-{name}-{width}px", str(shot))
    return shot


_TEXT_SHOWN = """((caseId, texts, slack) => {
  const item = document.getElementById("cases").querySelector(
    'details.case[data-id="' + CSS.escape(caseId) + '"]');
  if (!item) { return {error: "no case " + caseId}; }
  const summary = item.querySelector(":scope > summary");
  summary.scrollIntoView({block: "center"});
  const width = window.innerWidth, height = window.innerHeight;
  const nodes = [];
  const walker = document.createTreeWalker(summary, NodeFilter.SHOW_TEXT);
  let all = "";
  while (walker.nextNode()) {
    nodes.push([walker.currentNode, all.length]);
    all += walker.currentNode.data;
  }
  const at = (offset) => {
    for (let i = nodes.length - 1; i >= 0; i -= 1) {
      if (nodes[i][1] <= offset) { return [nodes[i][0], offset - nodes[i][1]]; }
    }
    return null;
  };
  const clips = (element) => {
    const found = [];
    for (let up = element; up && up !== document.documentElement; up = up.parentElement) {
      const style = getComputedStyle(up);
      const hidden = style.display === "none" || style.visibility !== "visible"
        || parseFloat(style.opacity) === 0;
      if (hidden) { found.push(null); }
      if (style.overflowX !== "visible" || style.overflowY !== "visible") {
        found.push(up.getBoundingClientRect());
      }
    }
    return found;
  };
  const inside = (r, box) => r.left >= box.left - slack && r.right <= box.right + slack
    && r.top >= box.top - slack && r.bottom <= box.bottom + slack;
  return texts.map((text) => {
    const start = all.indexOf(text);
    if (start < 0) {
      return {text, shown: false, why: "not in the case's first row", failed: null};
    }
    const range = document.createRange();
    const [startNode, startOffset] = at(start);
    const [endNode, endOffset] = at(start + text.length - 1);
    range.setStart(startNode, startOffset);
    range.setEnd(endNode, endOffset + 1);
    const element = range.commonAncestorContainer.nodeType === Node.ELEMENT_NODE
      ? range.commonAncestorContainer : range.commonAncestorContainer.parentElement;
    const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0 || r.height > 0);
    const boxes = clips(element);
    const window_ = {left: 0, top: 0, right: width, bottom: height};
    const why = [];
    if (!rects.length) { why.push("not drawn"); }
    if (boxes.includes(null)) { why.push("hidden (display, visibility or opacity)"); }
    for (const r of rects) {
      if (r.width < 1 || r.height < 1) { why.push("drawn without size"); }
      if (!inside(r, window_)) { why.push("outside the window " + JSON.stringify(r)); }
      if (boxes.some((box) => box && !inside(r, box))) { why.push("clipped by its box"); }
    }
    const chip = element.closest("[data-failed]");
    return {
      text, shown: why.length === 0, why: why.join("; "),
      failed: chip && chip !== summary ? chip.getAttribute("data-failed") : null,
    };
  });
})"""


def failing_criteria(case: CaseResult) -> dict[str, int]:
    """What failed the case's trials, as its report should name it: each criterion that
    failed some trial (by its label) and, when trials did not finish, ``errored``; with
    how many trials."""
    failed = {c.label or c.criterion: c.failed for c in case.criteria if c.failed}
    if case.errored:
        failed["errored"] = case.errored
    return failed


def case_row(tab: Tab, case: CaseResult, texts: list[str]) -> list[dict[str, Any]]:
    shown: list[dict[str, Any]] = tab.evaluate(call(_TEXT_SHOWN, case.case_id, texts, SLACK_PX))
    return shown


_OPEN_CASE = """(async (caseId) => {
  const pause = (ms) => new Promise((done) => setTimeout(done, ms));
  const item = document.getElementById("cases").querySelector(
    'details.case[data-id="' + CSS.escape(caseId) + '"]');
  if (!item.open) { item.querySelector(":scope > summary").click(); }
  const body = item.querySelector(".case-body");
  for (let i = 0; i < 500 && !body.hasAttribute("data-drawn"); i += 1) { await pause(10); }
  for (const trial of body.querySelectorAll(":scope > details.trial")) {
    if (!trial.open) { trial.querySelector(":scope > summary").click(); }
  }
  await pause(300);
  return body.getAttribute("data-drawn");
})"""


def call(function: str, *args: object) -> str:
    """An expression calling the page-side ``function`` with ``args`` (as JSON)."""
    return f"({function})({', '.join(json.dumps(arg) for arg in args)})"


# --- the report ----------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_the_report_fits_and_each_case_row_shows_what_failed_it(
    devtools: DevTools,
    tmp_path: Path,
    report_file: Path,
    sample: RunResult,
    width: int,
    record_property: ScreenshotRecorder,
) -> None:
    tab = devtools.open_tab(width=width, height=HEIGHT)
    tab.load(report_file)
    screenshot(tab, tmp_path, "report", width, record_property)
    assert_fits(tab, "the report")
    assert_chart_text_readable(tab, f"the report at {width} px", 20)

    not_passing = [case for case in sample.cases if case.passed < case.runs]
    assert len(not_passing) >= 4  # flaky and failing cases, by a criterion and by crashes
    assert any(case.errored for case in not_passing)
    problems = []
    for case in not_passing:
        failed = failing_criteria(case)
        assert failed, case.case_id
        rate = [f"{case.passed}/{case.runs}", format_pct(case.pass_rate)]
        for seen in case_row(tab, case, [*failed, *rate]):
            if not seen["shown"]:
                problems.append(f"{case.case_id}: {seen['text']!r} {seen['why']}")
            elif seen["text"] in failed and seen["failed"] != str(failed[seen["text"]]):
                problems.append(
                    f"{case.case_id}: {seen['text']!r} is not marked as failing "
                    f"{failed[seen['text']]} trials (marked {seen['failed']})"
                )
    assert problems == [], f"at {width} px:\n" + "\n".join(problems)

    # a case opened with its trials: calls side by side, answers, verdicts, errors
    for case_id in ("weather_multi_city", "hotel_booking_two_turns"):
        assert tab.evaluate(call(_OPEN_CASE, case_id)) == "yes"
    screenshot(tab, tmp_path, "report-two-cases-open", width, record_property)
    assert_fits(tab, "the report with two cases open")


def test_the_measures_catch_what_sticks_out_or_is_hidden(
    devtools: DevTools, tmp_path: Path
) -> None:
    """The control: the measures flag a wide element, one in a box that scrolls, a
    page that scrolls sideways, and a criterion hidden, cut off or absent."""
    page = tmp_path / "control.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta name='viewport' content='width=device-width'>"
        "</head><body style='margin:0'>"
        "<div style='width:900px'>wide</div>"
        "<div style='overflow-x:auto'><table style='width:900px'><tr><td>t</td></tr></table>"
        "</div><div id='cases'><details class='case' data-id='c'><summary>"
        "<span style='display:none'>trajectory</span>"
        "<span style='display:inline-block;width:40px;overflow:hidden;white-space:nowrap'>"
        "response ROUGE-1</span><span data-failed='2'>judge 1/5</span></summary>"
        "</details></div></body></html>",
        encoding="utf-8",
    )
    tab = devtools.open_tab(width=375, height=HEIGHT)
    tab.load(page)
    layout = tab.evaluate(call(_OVERFLOW, SLACK_PX))
    assert layout["pageWidth"] > 375
    assert [entry.split(" ")[0] for entry in layout["outside"]] == [
        "div",
        "table",
        "tbody",
        "tr",
        "td",
    ]
    tab.evaluate("document.querySelector('div').style.width = '10px'")
    with pytest.raises(AssertionError, match=r"outside the window: table \["):
        assert_fits(tab, "the control")  # a box that scrolls does not excuse its content
    case = CaseResult(
        case_id="c", label="", runs=5, passed=1, failed=4, errored=0, not_evaluated=0,
        pass_rate=0.2, ci_low=0, ci_high=1,
    )  # fmt: skip
    seen = case_row(tab, case, ["trajectory", "response ROUGE-1", "judge", "1/5", "absent"])
    assert [(s["shown"], s["failed"]) for s in seen] == [
        (False, None),
        (False, None),
        (True, "2"),
        (True, "2"),
        (False, None),
    ]
    assert "hidden" in seen[0]["why"] and "clipped" in seen[1]["why"]
    assert seen[4]["why"] == "not in the case's first row"


# --- what view --serve serves, and a published eval set's pages -----------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_the_served_pages_fit(
    devtools: DevTools,
    tmp_path: Path,
    served: str,
    width: int,
    record_property: ScreenshotRecorder,
) -> None:
    tab = devtools.open_tab(width=width, height=HEIGHT)
    tab.load(served)
    screenshot(tab, tmp_path, "served-runs", width, record_property)
    assert_fits(tab, "the list of runs")
    links = tab.evaluate(
        "({history: document.querySelector('a.history').href,"
        " report: document.querySelector('a.report').href})"
    )
    tab.load(links["history"])
    screenshot(tab, tmp_path, "served-history", width, record_property)
    assert_fits(tab, "an eval set's history")
    tab.load(links["report"])
    assert tab.evaluate("document.getElementById('shown').textContent") == "showing 6 of 6"
    assert_fits(tab, "a served report")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_published_index_and_explorer_fit(
    devtools: DevTools,
    tmp_path: Path,
    published: Path,
    width: int,
    record_property: ScreenshotRecorder,
) -> None:
    tab = devtools.open_tab(width=width, height=HEIGHT)
    tab.load(published / "index.html")
    assert tab.evaluate("document.querySelectorAll('table.trends tbody tr').length") >= 3
    screenshot(tab, tmp_path, "published-index", width, record_property)
    assert_fits(tab, "the published index")
    assert_chart_text_readable(tab, f"the published index at {width} px", 3)
    tab.load(published / "explorer.html")
    rows = tab.evaluate("document.querySelectorAll('#side-by-side tbody tr').length")
    assert rows >= 3  # the explorer's script drew two runs side by side
    screenshot(tab, tmp_path, "published-explorer", width, record_property)
    assert_fits(tab, "the explorer")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_trend_of_production_traces_fits(
    devtools: DevTools,
    tmp_path: Path,
    traces_published: Path,
    width: int,
    record_property: ScreenshotRecorder,
) -> None:
    tab = devtools.open_tab(width=width, height=HEIGHT)
    tab.load(traces_published / "trend.html")
    rows = tab.evaluate(
        "[...document.querySelectorAll('#trend tbody tr')].map(r => ["
        "r.dataset.version, r.classList.contains('dropped'), r.innerText])"
    )
    assert [(version, dropped) for version, dropped, _ in rows] == [
        ("1.4.0", False),
        ("1.5.0", True),
    ]
    assert "95% CI" in rows[0][2] and "95% CI" in rows[1][2]
    assert "Boschloo's exact test" in rows[1][2]  # the drop names the test that called it
    screenshot(tab, tmp_path, "traces-trend", width, record_property)
    assert_fits(tab, "the trend page")
    assert_chart_text_readable(tab, f"the trend page at {width} px", 3)
