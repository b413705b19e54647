"""``agentflow-eval view --serve`` in a real browser: the command (a real subprocess)
serves the page of every run under an output folder on 127.0.0.1; headless Chromium opens
it and follows the link to each run's report, which loads with its own script running."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.chromium import Chromium, chromium_binary
from support.devtools import DevTools
from support.sample_results import write_output_folder
from support.served_view import served_output_folder

pytestmark = pytest.mark.e2e


@pytest.fixture
def devtools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevTools]:
    browser = Chromium(chromium_binary(), tmp_path_factory.mktemp("chromium-profile"))
    with browser.devtools() as tools:
        yield tools


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    output = tmp_path / "eval-results"
    write_output_folder(output)
    with served_output_folder(output) as address:
        yield address


def test_the_served_index_leads_to_every_runs_report(devtools: DevTools, served: str) -> None:
    assert served.startswith("http://127.0.0.1:")
    tab = devtools.open_tab()
    tab.load(served)
    listed = tab.evaluate(
        "Array.from(document.querySelectorAll('tr.run')).map((row) => ({"
        " run: row.dataset.run,"
        " report: row.querySelector('a.report').href,"
        " rate: row.querySelector('strong').textContent}))"
    )
    assert [row["run"] for row in listed] == ["bbbb2222", "cccc3333", "aaaa1111"]
    assert all(row["rate"].endswith("%") for row in listed)
    for row in listed:
        tab.load(row["report"])  # following the row's link
        page = tab.evaluate(
            "({url: location.href, title: document.title,"
            " shown: (document.getElementById('shown') || {}).textContent})"
        )
        assert page["url"] == row["report"], json.dumps(page)
        assert page["title"].endswith("· agentflow-eval")
        assert page["shown"] == "showing 6 of 6"  # the report's own script ran
