"""The report in a real browser (headless Chromium): agent answers carrying script
payloads show as text and run nothing; the report's own script runs; screenshots work.

Every "nothing ran" check has a control that shows the same payload *does* run when the
defence is absent, so the checks cannot pass by not looking.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.chromium import Chromium, chromium_binary, png_size
from support.sample_results import XSS_ANSWER, sample_run

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
def report_html() -> str:
    run, eval_set = sample_run()
    return render_html(run, eval_set)


def write(path: Path, html: str) -> Path:
    path.write_text(html, encoding="utf-8")
    return path


def body_tag(dom: str) -> str:
    match = re.search(r"<body[^>]*>", dom)
    assert match, dom[:500]
    return match.group(0)


def test_control_the_payload_runs_when_not_escaped(browser: Chromium, tmp_path: Path) -> None:
    page = write(
        tmp_path / "control.html",
        f"<!DOCTYPE html><html><head><title>control</title></head><body>{XSS_ANSWER}</body></html>",
    )
    dom = browser.dump_dom(page)
    assert "data-pwned=" in body_tag(dom)
    assert "<title>PWNED-" in dom


def test_agent_answer_with_payloads_shows_as_text_and_runs_nothing(
    browser: Chromium, tmp_path: Path, report_html: str
) -> None:
    dom = browser.dump_dom(write(tmp_path / "report.html", report_html))
    assert TITLE in dom and "PWNED" not in dom.split("</title>")[0]
    assert "data-pwned" not in body_tag(dom)
    # the payload is on the page, as text
    assert '&lt;script&gt;document.title="PWNED-SCRIPT";' in dom
    assert "&lt;img src=x onerror=\"document.title='PWNED-IMG';" in dom
    assert "<img" not in dom
    # the report's own script did run: it revealed the controls and counted the cases
    assert 'id="controls" hidden' not in dom and 'id="controls"' in dom
    assert '<span class="muted" id="shown">showing 6 of 6</span>' in dom


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


def _expand(html: str, case_id: str) -> str:
    """The page with one case and its non-passing trials open (markup only: the CSP
    hashes cover the script and style, which stay as they were)."""
    start = html.index(f'data-id="{case_id}"')
    case_start = html.rindex("<details class=", 0, start)
    end = html.find('<details class="case', start)
    block = html[case_start:end]
    block = block.replace("<details class=", "<details open class=", 1)
    block = block.replace(
        '<details class="trial t-failed">', '<details open class="trial t-failed">'
    )
    return html[:case_start] + block + html[end:]


def test_screenshot_of_a_realistic_report(
    browser: Chromium, tmp_path: Path, report_html: str
) -> None:
    page = write(tmp_path / "report.html", _expand(report_html, "weather_multi_city"))
    shot = browser.screenshot(page, tmp_path / "report.png", width=1300, height=2600)
    assert png_size(shot) == (1300, 2600)
    assert shot.stat().st_size > 50_000  # a rendered page, not a blank one
    if os.environ.get("AGENTFLOW_UPDATE_DOCS_SCREENSHOT") == "1":
        shutil.copyfile(shot, DOCS_SCREENSHOT)
