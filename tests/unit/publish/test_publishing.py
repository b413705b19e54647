"""Publishing run directories: layout, history, content types, retries, pending runs."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest
from support.sample_results import sample_run, write_run_dir

from agentflow_eval.errors import InputError, StoreError
from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.models.results import RunResult
from agentflow_eval.publish.publisher import (
    PENDING_MARKER,
    PUBLISHED_MARKER,
    RetryPolicy,
    find_pending,
    publish_pending,
    publish_run,
    run_folder,
)
from agentflow_eval.storage.local import LocalStore


def _run(run_id: str, hours_later: int = 0, **changes: object) -> RunResult:
    run, _ = sample_run(cases=2, trials=2, run_id=run_id)
    run.started_at += timedelta(hours=hours_later)
    run.finished_at += timedelta(hours=hours_later)
    for key, value in changes.items():
        setattr(run, key, value)
    return run


def _run_dir(tmp_path: Path, run: RunResult) -> Path:
    return write_run_dir(tmp_path / "runs" / run_folder(run), run)


def no_sleep(_: float) -> None:
    return None


def test_layout_in_a_local_directory(tmp_path: Path) -> None:
    run = _run("r1")
    outcome = publish_run(_run_dir(tmp_path, run), tmp_path / "site", sleep=no_sleep)
    assert outcome.published, outcome.message
    base = tmp_path / "site" / "travel_agent_nightly"
    folder = base / "20261120T023000Z-r1"
    assert sorted(p.name for p in folder.iterdir()) == ["junit.xml", "report.html", "results.json"]
    assert sorted(p.name for p in base.iterdir()) == [
        "20261120T023000Z-r1",
        "explorer.html",
        "index.html",
        "latest.json",
        "runs.json",
        "trend.html",
    ]
    assert read_results_json(folder / "results.json") == run
    assert outcome.report_url == (folder / "report.html").as_uri()
    assert set(outcome.urls) == {
        *("report", "results", "junit", "index", "explorer", "trend", "latest", "manifest")
    }
    latest = json.loads((base / "latest.json").read_text())
    assert latest["run_id"] == "r1" and latest["report"] == "20261120T023000Z-r1/report.html"
    index = (base / "index.html").read_text()
    assert 'href="20261120T023000Z-r1/report.html"' in index
    assert "Content-Security-Policy" in index and "<script" not in index
    assert not (outcome.local_dir / PENDING_MARKER).exists()
    published = json.loads((outcome.local_dir / PUBLISHED_MARKER).read_text())
    assert published["urls"]["report"] == outcome.report_url


def test_history_newest_first_and_latest_never_moves_back(tmp_path: Path) -> None:
    site = tmp_path / "site"
    older, newer = _run("old", 0), _run("new", 24)
    assert publish_run(_run_dir(tmp_path, newer), site, sleep=no_sleep).published
    # the older run is published later (say, it was pending): it joins the history
    assert publish_run(_run_dir(tmp_path, older), site, sleep=no_sleep).published
    assert publish_run(_run_dir(tmp_path, older), site, sleep=no_sleep).published  # again
    base = site / "travel_agent_nightly"
    manifest = json.loads((base / "runs.json").read_text())
    assert [r["run_id"] for r in manifest["runs"]] == ["new", "old"]
    assert json.loads((base / "latest.json").read_text())["run_id"] == "new"
    index = (base / "index.html").read_text()
    assert index.index("20261121T023000Z-new") < index.index("20261120T023000Z-old")
    assert 'class="trend"' in index  # two runs make a trend line


def test_hostile_ids_stay_inside_the_target(tmp_path: Path) -> None:
    run = _run("../../../../tmp/x\x00", eval_set_id="../../etc/<script>")
    outcome = publish_run(_run_dir(tmp_path, run), tmp_path / "site", sleep=no_sleep)
    assert outcome.published, outcome.message
    written = [p for p in (tmp_path / "site").rglob("*") if p.is_file()]
    assert len(written) == 8
    for path in written:
        relative = path.relative_to(tmp_path / "site").as_posix()
        assert ".." not in relative and "<" not in relative and "\x00" not in relative
    assert not (tmp_path / "etc").exists()


@dataclass
class RecordingStore:
    """An object store that records puts and can fail the first ``failures`` calls."""

    failures: int = 0
    transient: bool = True
    puts: list[tuple[str, str, str | None]] = field(default_factory=list)
    objects: dict[str, bytes] = field(default_factory=dict)
    calls: int = 0

    def describe(self) -> str:
        return "memory://test"

    def _maybe_fail(self) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise StoreError("connection refused", transient=self.transient)

    def put(self, key: str, body: bytes, content_type: str, cache_control: str | None) -> None:
        self._maybe_fail()
        self.puts.append((key, content_type, cache_control))
        self.objects[key] = body

    def get(self, key: str) -> bytes | None:
        self._maybe_fail()
        return self.objects.get(key)

    def url(self, key: str) -> str:
        return f"memory://test/{key}"


def test_every_object_gets_its_content_type_and_latest_comes_last(tmp_path: Path) -> None:
    store = RecordingStore()
    outcome = publish_run(_run_dir(tmp_path, _run("r1")), store, sleep=no_sleep)
    assert outcome.published
    folder = "travel_agent_nightly/20261120T023000Z-r1"
    assert store.puts == [
        (f"{folder}/report.html", "text/html; charset=utf-8", None),
        (f"{folder}/results.json", "application/json", None),
        (f"{folder}/junit.xml", "application/xml", None),
        ("travel_agent_nightly/runs.json", "application/json", "no-cache"),
        ("travel_agent_nightly/explorer.html", "text/html; charset=utf-8", "no-cache"),
        ("travel_agent_nightly/trend.html", "text/html; charset=utf-8", "no-cache"),
        ("travel_agent_nightly/index.html", "text/html; charset=utf-8", "no-cache"),
        ("travel_agent_nightly/latest.json", "application/json", "no-cache"),
    ]
    assert outcome.report_url == f"memory://test/{folder}/report.html"


@dataclass
class SigningStore(RecordingStore):
    """A store whose links differ at each signing, as presigned links do from one second
    to the next."""

    signed: int = 0

    def url(self, key: str) -> str:
        self.signed += 1
        return f"memory://test/{key}?signature={self.signed}"


def test_latest_points_at_the_very_link_printed_for_the_run(tmp_path: Path) -> None:
    store = SigningStore()
    outcome = publish_run(_run_dir(tmp_path, _run("r1")), store, sleep=no_sleep)
    latest = json.loads(store.objects["travel_agent_nightly/latest.json"])
    assert latest["report_url"] == outcome.report_url
    assert "signature=" in latest["report_url"]


def test_transient_failures_are_retried_with_jittered_backoff(tmp_path: Path) -> None:
    store = RecordingStore(failures=3)
    waits: list[float] = []
    policy = RetryPolicy(attempts=5, base_delay_s=0.5, max_delay_s=8.0)
    outcome = publish_run(_run_dir(tmp_path, _run("r1")), store, retry=policy, sleep=waits.append)
    assert outcome.published and len(store.puts) == 8
    assert len(waits) == 3
    assert all(0 <= wait <= cap for wait, cap in zip(waits, (0.5, 1.0, 2.0), strict=True))
    assert outcome.attempts == 8 + 1 + 3  # eight puts, one manifest read, three retries


def test_backoff_caps_and_stays_within_bounds() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=4.0)
    rng = random.Random(1)
    delays = [policy.delay(attempt, rng) for attempt in range(8) for _ in range(50)]
    assert max(delays) <= 4.0 and min(delays) >= 0.0
    assert len({round(d, 6) for d in delays}) > 100  # jittered, not fixed
    with pytest.raises(ValueError, match="attempts must be at least 1, got 0"):
        RetryPolicy(attempts=0)


def test_store_down_keeps_the_run_marks_it_pending_and_publishes_later(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.write_text("not a directory")  # every write under it fails
    run_dir = _run_dir(tmp_path, _run("r1"))
    outcome = publish_run(run_dir, site, retry=RetryPolicy(attempts=2), sleep=no_sleep)
    assert not outcome.published and outcome.urls == {}
    assert outcome.attempts == 1  # a refusal is not retried
    assert f"The run is kept at {run_dir}" in outcome.message
    assert f"agentflow-eval publish {run_dir}" in outcome.message
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "junit.xml",
        PENDING_MARKER,
        "report.html",
        "results.json",
    ]
    pending = json.loads((run_dir / PENDING_MARKER).read_text())
    assert pending["target"] == {"kind": "local", "path": str(site)}
    assert find_pending(tmp_path / "runs") == [run_dir]

    site.unlink()  # the store is back
    later = publish_pending(run_dir, sleep=no_sleep)
    assert later.published, later.message
    assert (site / "travel_agent_nightly" / "20261120T023000Z-r1" / "report.html").is_file()
    assert not (run_dir / PENDING_MARKER).exists() and find_pending(tmp_path / "runs") == []


def test_transient_outage_exhausts_retries_then_reports(tmp_path: Path) -> None:
    store = RecordingStore(failures=100)
    run_dir = _run_dir(tmp_path, _run("r1"))
    waits: list[float] = []
    outcome = publish_run(run_dir, store, retry=RetryPolicy(attempts=4), sleep=waits.append)
    assert not outcome.published and outcome.attempts == 4 and len(waits) == 3
    assert "the store kept failing (connection refused; 4 attempt(s))" in outcome.message


def test_pending_without_a_record_needs_a_target(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path, _run("r1"))
    with pytest.raises(ValueError, match=r"has no publish-pending\.json"):
        publish_pending(run_dir)


def test_an_unfinished_run_directory_is_refused(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path, _run("r1"))
    (run_dir / "junit.xml").unlink()
    with pytest.raises(InputError, match=r"missing junit\.xml"):
        publish_run(run_dir, tmp_path / "site")


def test_an_unreadable_manifest_is_set_aside_not_overwritten(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "site")
    store.put("travel_agent_nightly/runs.json", b'{"oops": true}', "application/json", None)
    outcome = publish_run(_run_dir(tmp_path, _run("r1")), store, sleep=no_sleep)
    assert outcome.published and "was not a runs manifest" in outcome.message
    kept = list((tmp_path / "site" / "travel_agent_nightly").glob("runs.unreadable-*.json"))
    assert len(kept) == 1 and kept[0].read_bytes() == b'{"oops": true}'


def test_a_run_that_measured_nothing_is_published_but_never_becomes_latest(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    good = _run("good", 0)
    assert publish_run(_run_dir(tmp_path, good), site, sleep=no_sleep).published
    broken = _run("broken", 24)
    totals = broken.totals
    totals.errored, totals.passed, totals.failed = totals.trials, 0, 0
    totals.not_evaluated = 0
    for case in broken.cases:  # every trial errored, case by case too
        case.errored, case.passed, case.failed, case.not_evaluated = case.runs, 0, 0, 0
    outcome = publish_run(_run_dir(tmp_path, broken), site, sleep=no_sleep)
    assert outcome.published
    assert "measured nothing" in outcome.message
    base = site / "travel_agent_nightly"
    manifest = json.loads((base / "runs.json").read_text())
    assert [r["run_id"] for r in manifest["runs"]] == ["broken", "good"]  # in the history
    assert json.loads((base / "latest.json").read_text())["run_id"] == "good"
