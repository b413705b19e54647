"""The run explorer published beside the index: every run with its agent, version, model
and labels, and any two of the newest runs side by side with the same per-case verdicts
``agentflow-eval compare --json`` gives for them; on a presigning store the index and
the explorer carry presigned links and the published message names them with their
lifetime."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from support.explorer_runs import three_nights
from support.run_counts import Counts, run_with_counts
from support.sample_results import write_run_dir

from agentflow_eval.compare import compare_runs
from agentflow_eval.publish.publisher import publish_run, run_folder
from agentflow_eval.report.csp import csp_hash
from agentflow_eval.report.explorer_data import (
    EXPLORER_COMPARED_RUNS,
    ExplorerData,
    explorer_data,
    pair_key,
)
from agentflow_eval.report.templating import asset
from agentflow_eval.storage import S3Store
from agentflow_eval.storage.history import RunsManifest, run_entry
from agentflow_eval.storage.targets import S3Credentials, S3Target


def _publish(tmp_path: Path, target: Path | S3Store) -> list[Path]:
    folders = []
    for run in three_nights():
        folder = write_run_dir(tmp_path / "runs" / run_folder(run), run)
        outcome = publish_run(folder, target)
        assert outcome.published, outcome.message
        folders.append(folder)
    return folders


def _embedded(page: str) -> ExplorerData:
    block = re.search(r'<script type="application/json" id="explorer-data">(.*?)</script>', page)
    assert block is not None
    return ExplorerData.model_validate_json(block.group(1))


def test_the_explorer_shows_compares_verdicts_for_every_pair(tmp_path: Path) -> None:
    target = tmp_path / "published"
    _publish(tmp_path, target)
    page = (target / "travel_agent_nightly" / "explorer.html").read_text()
    data = _embedded(page)
    runs = three_nights()
    assert [run.run_id for run in data.runs] == ["night2", "night1", "night0"]  # newest first
    newest = data.runs[0]
    assert (newest.agent_version, newest.agent_model, newest.labels) == (
        "v2",
        "other-model",
        {"branch": "main"},
    )
    assert newest.cases == {"steady": (9, 10), "broken": (1, 10), "new": (5, 10)}
    assert newest.report == f"{run_folder(runs[2])}/report.html"  # relative: plain links
    assert len(data.comparisons) == 3  # every pair, the older run as the baseline
    for older in range(3):
        for newer in range(older + 1, 3):
            expected = compare_runs(runs[older], runs[newer])
            shown = data.comparisons[pair_key(run_folder(runs[older]), run_folder(runs[newer]))]
            assert shown.verdict == expected.overall.verdict
            assert [(c.case_id, c.verdict) for c in shown.cases] == [
                (c.case_id, c.verdict) for c in expected.cases
            ]
    night0_night1 = data.comparisons[pair_key(run_folder(runs[0]), run_folder(runs[1]))]
    verdicts = {case.case_id: case.verdict for case in night0_night1.cases}
    assert verdicts == {
        "steady": "no significant change",
        "broken": "regression",
        "fixed": "improvement",
    }

    # CSP-safe: the one script runs by hash, the data block is JSON that runs nothing
    script = str(asset("explorer.js"))
    assert f"script-src {csp_hash(script)}" in html.unescape(page)
    assert f"<script>{script}</script>" in page
    assert "http://" not in page and "https://" not in page  # no external assets
    index = (target / "travel_agent_nightly" / "index.html").read_text()
    assert 'href="explorer.html"' in index


def test_markup_in_a_label_cannot_end_the_data_block(tmp_path: Path) -> None:
    run = three_nights()[0]
    run.labels = {"note": "</script><script>alert(1)</script>&"}
    folder = write_run_dir(tmp_path / "run", run)
    publish_run(folder, tmp_path / "published")
    page = (tmp_path / "published" / "travel_agent_nightly" / "explorer.html").read_text()
    assert page.count("</script>") == 2  # the data block's and the script's own
    assert _embedded(page).runs[0].labels == run.labels


def test_only_the_newest_runs_are_compared() -> None:
    manifest = RunsManifest(eval_set_id="travel_agent_nightly")
    summaries = {}
    for day in range(EXPLORER_COMPARED_RUNS + 2):
        run = run_with_counts([Counts("a", day % 2, 1)], run_id=f"night{day}", day=day)
        manifest = manifest.with_run(run_entry(run, run_folder(run), []))
        summaries[run_folder(run)] = run
    data = explorer_data(manifest, summaries, lambda folder, name: f"{folder}/{name}")
    assert [run.comparable for run in data.runs] == [True] * EXPLORER_COMPARED_RUNS + [False] * 2
    n = EXPLORER_COMPARED_RUNS
    assert len(data.comparisons) == n * (n - 1) // 2


def _presigning_store(tmp_path: Path) -> S3Store:
    """An S3 store whose puts land in a folder: links are signed offline by boto3, so
    the pages' links are checked without a server (the e2e test opens them)."""
    target = S3Target(
        bucket="evals",
        prefix="team",
        endpoint_url="http://127.0.0.1:9",
        path_style=True,
        region="us-east-1",
        credentials=S3Credentials(access_key_id="key", secret_access_key="secret"),
        links="presigned",
        link_expiry_s=3 * 24 * 3600,
    )
    return _FolderBackedS3(target, tmp_path / "bucket")


class _FolderBackedS3(S3Store):
    def __init__(self, target: S3Target, root: Path) -> None:
        super().__init__(target)
        from agentflow_eval.storage import LocalStore

        self._folder = LocalStore(root)

    def put(self, key: str, body: bytes, content_type: str, cache_control: str | None) -> None:
        self._folder.put(key, body, content_type, cache_control)

    def get(self, key: str) -> bytes | None:
        return self._folder.get(key)

    def open(self, key: str):  # type: ignore[no-untyped-def,override]
        return self._folder.open(key)


def test_presigned_pages_link_with_signatures_and_say_until_when(tmp_path: Path) -> None:
    store = _presigning_store(tmp_path)
    folders = _publish(tmp_path, store)
    marker = json.loads((folders[-1] / "published.json").read_text())
    index_url, explorer_url = marker["urls"]["index"], marker["urls"]["explorer"]
    for url in (index_url, explorer_url):
        assert "X-Amz-Signature=" in url and "X-Amz-Expires=259200" in url
    assert marker["links_expire_at"]
    outcome_message = publish_run(folders[-1], store).message
    assert "Runs index: http://127.0.0.1:9/evals/team/travel_agent_nightly/index.html?" in (
        outcome_message
    )
    assert "presigned links, valid until" in outcome_message

    published = tmp_path / "bucket" / "travel_agent_nightly"
    index = html.unescape((published / "index.html").read_text())
    hrefs = re.findall(r'href="([^"]+)"', index)
    run_links = [h for h in hrefs if "report.html" in h or "explorer.html" in h]
    assert len(run_links) == 3 + 1
    assert all("X-Amz-Signature=" in h for h in run_links)
    assert "work until" in index
    data = _embedded((published / "explorer.html").read_text())
    assert all("X-Amz-Signature=" in run.report for run in data.runs)
    # the trend page, like the others: every link signed (each run's report, the index,
    # the explorer), and each page's link to it too
    assert "X-Amz-Signature=" in marker["urls"]["trend"]
    trend = html.unescape((published / "trend.html").read_text())
    trend_links = [h for h in re.findall(r'href="([^"]+)"', trend) if h != "data:,"]
    assert len(trend_links) == 3 + 2 and "work until" in trend
    assert all("X-Amz-Signature=" in h for h in trend_links)
    for page in (index, html.unescape((published / "explorer.html").read_text())):
        (to_trend,) = re.findall(r'id="trend-link" href="([^"]+)"', page)
        assert "trend.html?" in to_trend and "X-Amz-Signature=" in to_trend
