"""A team opens its history on a private bucket: three runs published by the real CLI
to SeaweedFS with credentials (presigned links, the default); the index opens in
headless Chromium from the presigned link published.json records (the unsigned one is
refused), the explorer from the index's link, and two runs picked side by side show the
per-case verdicts ``agentflow-eval compare --json`` gives for those two runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.chromium import Chromium, chromium_binary
from support.explorer_runs import three_nights
from support.sample_results import write_run_dir

from agentflow_eval.publish.publisher import run_folder
from tests.support.seaweed import SeaweedFS

pytestmark = pytest.mark.e2e

AGENTFLOW_EVAL = str(Path(sys.executable).parent / "agentflow-eval")
BUCKET = "run-explorer"
PREFIX = "team"
EVAL_SET = "travel_agent_nightly"


@pytest.fixture(scope="module")
def seaweed(shared_seaweed: SeaweedFS) -> Iterator[SeaweedFS]:
    shared_seaweed.client().create_bucket(Bucket=BUCKET)
    yield shared_seaweed


def _cli(seaweed: SeaweedFS, *args: str) -> str:
    env = dict(os.environ)
    env.update(
        AWS_ACCESS_KEY_ID=seaweed.access_key,
        AWS_SECRET_ACCESS_KEY=seaweed.secret_key,
        AWS_DEFAULT_REGION=seaweed.region,
    )
    flags = ["--s3-endpoint-url", seaweed.endpoint_url, "--s3-path-style"]
    done = subprocess.run(
        [AGENTFLOW_EVAL, *args, *flags], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


PICK = """
(() => {
  const [a, b] = %s;
  document.getElementById("run-a").value = a;
  document.getElementById("run-b").value = b;
  document.getElementById("run-b").dispatchEvent(new Event("change"));
  return [...document.querySelectorAll("#side-by-side tbody tr")].map(
    (row) => [row.getAttribute("data-case"), row.getAttribute("data-verdict")]);
})()
"""


def test_the_index_and_explorer_open_from_presigned_links_and_agree_with_compare(
    tmp_path: Path, seaweed: SeaweedFS
) -> None:
    runs = three_nights()
    folders = [write_run_dir(tmp_path / run_folder(run), run) for run in runs]
    printed = ""
    for folder in folders:
        printed = _cli(seaweed, "publish", str(folder), "--to", f"s3://{BUCKET}/{PREFIX}")

    urls = json.loads((folders[-1] / "published.json").read_text())["urls"]
    index_url, explorer_url = urls["index"], urls["explorer"]
    assert "X-Amz-Signature=" in index_url and "X-Amz-Signature=" in explorer_url
    assert f"Runs index: {index_url}" in printed and "presigned links, valid until" in printed
    unsigned = f"{seaweed.endpoint_url}/{BUCKET}/{PREFIX}/{EVAL_SET}/index.html"
    assert _status(unsigned) == 403  # a private bucket: only the signed link opens
    assert _status(index_url) == 200

    old, new = run_folder(runs[0]), run_folder(runs[1])
    compared = json.loads(
        _cli(
            seaweed,
            "compare",
            f"s3://{BUCKET}/{PREFIX}/{EVAL_SET}/{old}",
            f"s3://{BUCKET}/{PREFIX}/{EVAL_SET}/{new}",
            "--json",
        )
    )
    expected = [[case["case_id"], case["verdict"]] for case in compared["cases"]]
    assert ["broken", "regression"] in expected and ["fixed", "improvement"] in expected

    browser = Chromium(chromium_binary(), tmp_path / "profile")
    with browser.devtools() as tools:
        tab = tools.open_tab()
        tab.load(index_url)
        runs_listed = tab.evaluate("document.querySelectorAll('table.runs tbody tr').length")
        assert runs_listed == 3
        explorer_link = tab.evaluate("document.getElementById('explorer-link').href")
        assert "X-Amz-Signature=" in explorer_link
        report_link = tab.evaluate("document.querySelector('td.files a').href")
        assert _status(report_link) == 200  # the index's run links are signed too

        tab.load(explorer_link)
        listed = tab.evaluate(
            "[...document.querySelectorAll('#runs tbody tr')].map(r => r.cells[1].innerText)"
        )
        assert listed == ["night2", "night1", "night0"]  # the script ran under the CSP
        tab.evaluate(
            "(() => { const f = document.getElementById('filter-version');"
            " f.value = 'v1'; f.dispatchEvent(new Event('change')); })()"
        )
        filtered = tab.evaluate(
            "[...document.querySelectorAll('#runs tbody tr')].map(r => r.cells[1].innerText)"
        )
        assert filtered == ["night1"]
        shown = tab.evaluate(PICK % json.dumps([new, old]))  # either order: older is baseline
        assert shown == expected
        overall = tab.evaluate("document.getElementById('overall').getAttribute('data-verdict')")
        assert overall == compared["overall"]["verdict"]
