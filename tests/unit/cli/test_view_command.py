"""``agentflow-eval view``: the newest run's report opened; ``--serve``'s page of every
run under the output folder (pass rate, agent, time, links that lead to each report and
each eval set's history), made again on each request; bad folders are one line, exit 2."""

from __future__ import annotations

import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.sample_results import sample_run, write_output_folder, write_run_dir

from agentflow_eval.cli import main
from agentflow_eval.cli.view import runs_server


@pytest.fixture
def output(tmp_path: Path) -> Path:
    """An output folder with three runs of two eval sets, and a run still going."""
    write_output_folder(tmp_path)
    return tmp_path


def test_view_opens_the_newest_report(
    output: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", opened.append)
    assert main(["view", str(output)]) == 0
    newest = output / "travel" / "20261122T090000Z-bbbb2222" / "report.html"
    assert capsys.readouterr().out.strip() == str(newest)
    assert opened == [newest.resolve().as_uri()]
    assert main(["view", str(output), "--no-open"]) == 0
    assert len(opened) == 1


def test_view_of_a_folder_without_runs_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["view", str(tmp_path / "nowhere"), "--no-open"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nowhere: no such folder of runs" in err
    assert main(["view", str(tmp_path), "--no-open"]) == 2
    assert "no run with a report.html here" in capsys.readouterr().err


@pytest.fixture
def served(output: Path) -> Iterator[str]:
    server = runs_server(output, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as reply:
        text: str = reply.read().decode("utf-8")
        return text


def test_the_served_page_lists_every_run_newest_first_with_links(served: str) -> None:
    page = _get(served)
    assert re.findall(r'data-run="(\w+)"', page) == ["bbbb2222", "cccc3333", "aaaa1111"]
    assert "1 run folder without a readable results.json" in page
    assert "travel-assistant" in page and "2026-11-22 09:00" in page
    reports = re.findall(r'<a class="report" href="([^"]+)"', page)
    assert reports == [
        "travel/20261122T090000Z-bbbb2222/report.html",
        "support/20261121T090000Z-cccc3333/report.html",
        "travel/20261120T090000Z-aaaa1111/report.html",
    ]
    for link in reports:
        assert "weather_multi_city" in _get(served + link)  # each link leads to its report
    history = _get(served + "travel/index.html")  # the eval set's history page
    assert "bbbb2222" in history and "aaaa1111" in history and "cccc3333" not in history
    assert 'id="trend-link" href="trend.html"' in history
    trend = _get(served + "travel/trend.html")  # its trend, oldest first
    assert re.findall(r'href="([^"]+)/report.html"', trend) == [
        "20261120T090000Z-aaaa1111",
        "20261122T090000Z-bbbb2222",
    ]
    assert "explorer-link" not in trend  # nothing serves an explorer here


def test_a_run_finished_while_serving_shows_up_and_nothing_outside_is_served(
    served: str, output: Path
) -> None:
    run, _ = sample_run(trials=2)
    later = run.model_copy(update={"eval_set_id": "travel", "run_id": "eeee5555"})
    write_run_dir(output / "travel" / "20261124T090000Z-eeee5555", later)
    assert 'data-run="eeee5555"' in _get(served)
    with pytest.raises(urllib.error.HTTPError) as missing:
        _get(served + "../../../etc/passwd")
    assert missing.value.code == 404
