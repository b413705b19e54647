"""The pages a person reads (the report, the list of local runs ``view --serve`` shows,
an eval set's history page) fit a phone (375 px), a narrow window (800 px) and a laptop
(1280 px) in headless Chromium: no element reaches past the viewport's edge, even inside
a box that would scroll, and each case's first line shows its pass rate and which
criterion fell short, without a click. A screenshot per page and width is kept in the
test's folder."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from support.chromium import Chromium, chromium_binary
from support.devtools import DevTools
from support.sample_results import sample_run, write_run_dir_streamed

from agentflow_eval.publish.local_runs import local_runs
from agentflow_eval.report.index_page import render_index
from agentflow_eval.report.local_index import render_local_index

pytestmark = pytest.mark.e2e

WIDTHS = (375, 800, 1280)

# Every element with a box, whose right edge passes the viewport's (or whose left edge
# lies before it); an overflow-hidden or scrolling box does not excuse its content.
OVERFLOW = r"""(() => {
  const width = document.documentElement.clientWidth;
  const name = (el) => {
    const classes = (el.getAttribute('class') || '').trim().split(/\s+/).filter(Boolean);
    return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      classes.map((c) => '.' + c).join('');
  };
  const over = [];
  for (const el of document.querySelectorAll('body *')) {
    const box = el.getBoundingClientRect();
    if (!box.width && !box.height) continue;
    if (box.right > width + 1 || box.left < -1) {
      over.push(`${name(el)} [${Math.round(box.left)}, ${Math.round(box.right)}]`);
    }
  }
  return {width, scrollWidth: document.documentElement.scrollWidth, over: [...new Set(over)]};
})()"""

# For each case that did not pass every trial: its first line (the summary), the pass
# rate and the criteria shown in it, and whether each can be seen (a box of its own,
# inside the viewport's width, not hidden by the stylesheet).
CASE_LINES = r"""(() => {
  const width = document.documentElement.clientWidth;
  const seen = (el) => {
    if (!el) return false;
    const box = el.getBoundingClientRect(), style = getComputedStyle(el);
    return box.width > 0 && box.height > 0 && box.left >= -1 && box.right <= width + 1 &&
      style.visibility !== 'hidden' && style.display !== 'none';
  };
  return [...document.querySelectorAll('details.case')]
    .filter((c) => c.dataset.state !== 'passing')
    .map((c) => {
      const line = c.querySelector(':scope > summary');
      const low = [...line.querySelectorAll('.mean.low')];
      const rate = line.querySelector('.rate strong');
      return {
        id: c.dataset.id,
        state: c.dataset.state,
        rate: seen(rate) ? rate.textContent : null,
        failing: low.filter(seen).map((el) => el.getAttribute('title')),
        failing_in_page: low.map((el) => el.getAttribute('title')),
      };
    });
})()"""


@pytest.fixture(scope="module")
def devtools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevTools]:
    browser = Chromium(chromium_binary(), tmp_path_factory.mktemp("chromium-profile"))
    with browser.devtools() as tools:
        yield tools


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A report, the local runs page over two runs, and the eval set's history page, as
    the commands write and serve them."""
    out = tmp_path_factory.mktemp("runs")
    run, eval_set = sample_run()
    later = run.model_copy(
        update={"run_id": "5b1d0e77", "started_at": run.started_at + timedelta(days=1)}
    )
    folder = out / "travel_agent_nightly"
    report = write_run_dir_streamed(folder / "20261120T023000Z-3f9a2c1e", run, eval_set)
    write_run_dir_streamed(folder / "20261121T023000Z-5b1d0e77", later, eval_set)
    runs = local_runs(out)
    local_index = out / "index.html"
    local_index.write_text(render_local_index(out.name, runs.manifests), encoding="utf-8")
    history = folder / "index.html"
    history.write_text(render_index(runs.manifests["travel_agent_nightly"]), encoding="utf-8")
    return {"report": report / "report.html", "runs": local_index, "history": history}


def _look(devtools: DevTools, page: Path, width: int, shot: Path) -> dict[str, Any]:
    tab = devtools.open_tab(width=width, height=900)
    tab.load(page)
    found: dict[str, Any] = tab.evaluate(OVERFLOW)
    height = int(tab.evaluate("document.documentElement.scrollHeight"))
    tab.screenshot(shot, full_height=min(height, 6000))
    if page.name == "report.html":
        found["cases"] = tab.evaluate(CASE_LINES)
    return found


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["report", "runs", "history"])
def test_the_page_fits_the_width(
    devtools: DevTools, pages: dict[str, Path], tmp_path: Path, name: str, width: int
) -> None:
    found = _look(devtools, pages[name], width, tmp_path / f"{name}-{width}.png")
    print(f"screenshot: {tmp_path / f'{name}-{width}.png'}")
    assert found["width"] == width
    assert found["scrollWidth"] <= width, found
    assert found["over"] == [], f"{name} at {width} px: wider than the page: {found['over'][:12]}"


@pytest.mark.parametrize("width", WIDTHS)
def test_each_case_line_shows_its_rate_and_the_criteria_that_fell_short(
    devtools: DevTools, pages: dict[str, Path], tmp_path: Path, width: int
) -> None:
    cases = _look(devtools, pages["report"], width, tmp_path / f"cases-{width}.png")["cases"]
    assert {case["state"] for case in cases} == {"flaky", "failing"}
    for case in cases:
        assert case["rate"], f"{case['id']} at {width} px: its pass rate is not on its line"
        assert case["failing_in_page"], f"{case['id']}: the sample marks no criterion low"
        assert case["failing"] == case["failing_in_page"], (
            f"{case['id']} at {width} px: criteria that fell short not visible on its line"
        )
