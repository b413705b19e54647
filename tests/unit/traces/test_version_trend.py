"""Versions watched over time: when production traces are scored and published, the
eval set's history keeps each version's window, pass rate with its interval, what a
trace took (with intervals) and the tests its comparison with the version before it
ran; its trend page shows them in order of time and marks a drop with its test."""

from __future__ import annotations

import html
import re
from pathlib import Path

from agentflow_eval.publish.local_runs import local_runs
from agentflow_eval.report.trend_data import TrendData, trend_data, window_of
from agentflow_eval.report.trend_page import render_trend
from agentflow_eval.run.stats import wilson_interval
from agentflow_eval.storage.history import RunsManifest
from tests.support.otlp_traces import export_request, write_s3_layout
from tests.unit.traces.conftest import Score
from tests.unit.traces.test_versions import _version, _write


def _link(folder: str, name: str) -> str:
    return f"{folder}/{name}"


def _published(tmp_path: Path, score: Score, new: tuple[int, int]) -> tuple[RunsManifest, str]:
    """Version 1.0 (28 of 30 traces pass) then 1.1 (``new``: passing, failing), scored
    and published; the eval set's runs.json and trend.html."""
    old_traces = _version("old", "1.0", passing=28, failing=2, start=0)
    new_traces = _version("new", "1.1", passing=new[0], failing=new[1], start=100)
    _write(tmp_path / "src", new_traces + old_traces)
    outcome = score(tmp_path / "src", tmp_path / "out", publish_to=str(tmp_path / "published"))
    folder = tmp_path / "published" / "traces-src"
    trend = f"pass rate and efficiency by version and window: {(folder / 'trend.html').as_uri()}"
    assert trend in outcome.lines()  # where to look, said where the run is told
    manifest = RunsManifest.model_validate_json((folder / "runs.json").read_text())
    return manifest, (folder / "trend.html").read_text()


def _row_text(page: str, version: str) -> str:
    (row,) = re.findall(rf'<tr[^>]*data-version="{re.escape(version)}">.*?</tr>', page, re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", row))


def test_a_planted_drop_shows_both_versions_with_intervals_and_the_test_that_called_it(
    tmp_path: Path, score: Score
) -> None:
    manifest, page = _published(tmp_path, score, new=(12, 18))

    data = trend_data(manifest, _link)
    old, new = data.rows
    assert (old.version, new.version) == ("1.0", "1.1")  # oldest window first
    assert old.window_end < new.window_start
    assert (old.passed, old.trials, new.passed, new.trials) == (28, 30, 12, 30)
    assert (new.ci_low, new.ci_high) == wilson_interval(12, 30)
    assert (old.ci_low, old.ci_high) == wilson_interval(28, 30)
    assert old.test is None  # the first version has nothing before it
    assert new.test is not None and new.test.regressed and data.drops == 1
    finding, *efficiency = new.test.findings
    assert finding.startswith("pass rate of all traces: 28/30 → 12/30 (−53 pts)")
    assert "Boschloo's exact test, Holm-adjusted p <0.001" in finding
    # the failing traces called a tool: the tool calls rose too, by their own test
    assert any("tool calls of all traces" in f and "Mann–Whitney U" in f for f in efficiency)

    # the history keeps what the page needs: the window, the test, the efficiency
    entry = next(e for e in manifest.runs if e.agent_version == "1.1")
    assert entry.labels["window_start"] == new.window_start.isoformat()
    assert entry.comparison is not None and entry.comparison.drops[0].test == "boschloo"
    assert entry.comparison.drops[0].p_adjusted is not None
    assert entry.comparison.drops[0].p_adjusted < 0.001
    assert entry.efficiency is not None
    latency = entry.efficiency.latency_ms
    assert (latency.trials, latency.median_low <= latency.median <= latency.median_high) == (
        30,
        True,
    )

    old_text, new_text = _row_text(page, "1.0"), _row_text(page, "1.1")
    assert "93.3%" in old_text and f"95% CI {old.interval}" in old_text
    assert "40.0%" in new_text and f"95% CI {new.interval}" in new_text
    assert "drop" in new_text and "Boschloo's exact test" in new_text
    assert "drop" not in old_text and "first, or not compared" in old_text
    assert new.latency.median in new_text and new.latency.interval in new_text
    assert 'class="dropped"' in page and page.count('class="dropped"') == 1
    assert "script-src 'none'" in html.unescape(page)  # no script at all on this page
    index = (tmp_path / "published" / "traces-src" / "index.html").read_text()
    assert 'href="trend.html"' in index


def test_versions_that_score_alike_show_no_drop(tmp_path: Path, score: Score) -> None:
    manifest, page = _published(tmp_path, score, new=(27, 3))

    data = trend_data(manifest, _link)
    new = data.rows[1]
    assert new.test is not None and not new.test.regressed
    assert new.test.verdict == "no significant change" and new.test.findings == []
    assert data.drops == 0 and 'class="dropped"' not in page
    assert "no significant change against agent version 1.0" in _row_text(page, "1.1")


def test_a_history_written_before_the_trend_reads_and_shows_what_it_has() -> None:
    """runs.json entries from before efficiency and the tests were kept: no window
    label, no efficiency, a comparison digest without its tests."""
    manifest = RunsManifest.model_validate(
        {
            "eval_set_id": "nightly",
            "runs": [
                {
                    "run_id": run_id,
                    "folder": f"2026010{day}T000000Z-{run_id}",
                    "started_at": f"2026-01-0{day}T00:00:00Z",
                    "finished_at": f"2026-01-0{day}T00:10:00Z",
                    "published_at": f"2026-01-0{day}T00:11:00Z",
                    "agent": "travel",
                    "agent_version": version,
                    "runs_per_case": 5,
                    "cases": 2,
                    "trials": 10,
                    "passed": passed,
                    "failed": 10 - passed,
                    "errored": 0,
                    "pass_rate": passed / 10,
                    "ci_low": wilson_interval(passed, 10)[0],
                    "ci_high": wilson_interval(passed, 10)[1],
                    **extra,
                }
                for day, run_id, version, passed, extra in (
                    (
                        2,
                        "b",
                        "2.0",
                        4,
                        {"comparison": {"baseline": "latest", "verdict": "regression"}},
                    ),
                    (1, "a", None, 9, {}),
                )
            ],
        }
    )
    data: TrendData = trend_data(manifest, _link)
    first, second = data.rows
    assert (first.version, second.version) == ("unversioned", "2.0")
    assert window_of(manifest.runs[1]) == (
        manifest.runs[1].started_at,
        manifest.runs[1].finished_at,
    )
    assert first.latency.median == "–" and first.test is None
    assert second.test is not None and second.test.regressed and second.test.findings == []
    page = render_trend(data)
    assert "regression against latest" in _row_text(page, "2.0")


def _two_batches(tmp_path: Path, score: Score, **settings: str) -> list[str]:
    """Version 1.0 scored in one batch (28 of 30 pass), then, in a later batch over new
    objects, the same version's later window (12 of 30 pass); the later batch's lines."""
    source = tmp_path / "src"
    first = _version("early", "1.0", passing=28, failing=2, start=0)
    write_s3_layout(source, [export_request(first[:15]), export_request(first[15:])])
    score(source, tmp_path / "out", **settings)
    later = _version("late", "1.0", passing=12, failing=18, start=100)
    write_s3_layout(source, [export_request(later[:15]), export_request(later[15:])], start=2)
    outcome = score(source, tmp_path / "out", **settings)
    (scored,) = outcome.versions
    assert scored.comparison is not None and scored.comparison.regressed
    assert scored.comparison.baseline.startswith("agent version 1.0, traces 2026-01-01 00:00")
    return outcome.lines()


def test_a_window_is_compared_with_the_window_an_earlier_batch_scored(
    tmp_path: Path, score: Score
) -> None:
    """Most scheduled batches hold one version: the drop between two of them is tested
    too (kept as local run folders, no publishing)."""
    lines = _two_batches(tmp_path, score)
    assert any(line.startswith("  against agent version 1.0, traces 2026-01-01") for line in lines)
    assert any("regressed: all traces 28/30 -> 12/30" in line for line in lines)
    # the run folders keep it: the trend ``view --serve`` draws from them shows the drop
    (history,) = local_runs(tmp_path / "out").manifests.values()
    later = trend_data(history, _link).rows[-1]
    assert later.test is not None and later.test.regressed


def test_the_trend_page_marks_a_drop_between_windows_of_one_version(
    tmp_path: Path, score: Score
) -> None:
    _two_batches(tmp_path, score, publish_to=str(tmp_path / "published"))
    folder = tmp_path / "published" / "traces-src"
    manifest = RunsManifest.model_validate_json((folder / "runs.json").read_text())
    data = trend_data(manifest, _link)
    earlier, later = data.rows
    assert (earlier.version, later.version) == ("1.0", "1.0")
    assert earlier.window_end < later.window_start
    assert later.test is not None and later.test.regressed and data.drops == 1
    assert "28/30 → 12/30" in later.test.findings[0]
    page = (folder / "trend.html").read_text()
    assert page.count('class="dropped"') == 1
