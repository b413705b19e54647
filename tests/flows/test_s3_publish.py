"""Publishing to a real S3-compatible store (SeaweedFS) and reading everything back."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.sample_results import sample_run, write_run_dir
from support.seaweed import SeaweedFS

from agentflow_eval.files.gates_json import GateRecord, write_gates_json
from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.models.results import RunResult
from agentflow_eval.publish.publisher import (
    PENDING_MARKER,
    RetryPolicy,
    publish_pending,
    publish_run,
    run_folder,
)
from agentflow_eval.storage.targets import S3Credentials, parse_target

pytestmark = pytest.mark.e2e

BUCKET = "agentflow-reports"

EXPECTED_TYPES = {
    "report.html": "text/html; charset=utf-8",
    "results.json": "application/json",
    "junit.xml": "application/xml",
}


@pytest.fixture(scope="module")
def seaweed(shared_seaweed: SeaweedFS) -> SeaweedFS:
    """The session's store (tests/conftest.py), with this module's bucket."""
    shared_seaweed.client().create_bucket(Bucket=BUCKET)
    return shared_seaweed


def credentials(store: SeaweedFS) -> S3Credentials:
    return S3Credentials(access_key_id=store.access_key, secret_access_key=store.secret_key)  # type: ignore[arg-type]


def s3_target(store: SeaweedFS, prefix: str, **options: object):  # type: ignore[no-untyped-def]
    return parse_target(
        f"s3://{BUCKET}/{prefix}",
        endpoint_url=store.endpoint_url,
        region=store.region,
        path_style=True,
        **options,  # type: ignore[arg-type]
    )


def make_run_dir(tmp_path: Path, run_id: str) -> tuple[RunResult, Path]:
    run, _eval_set = sample_run(run_id=run_id)
    return run, write_run_dir(tmp_path / "runs" / run_folder(run), run)


def read_back(store: SeaweedFS, key: str) -> tuple[str, bytes]:
    response = store.client().get_object(Bucket=BUCKET, Key=key)
    return response["ContentType"], response["Body"].read()


def test_publish_and_read_all_five_objects_back(seaweed: SeaweedFS, tmp_path: Path) -> None:
    run, run_dir = make_run_dir(tmp_path, "s3run01")
    target = s3_target(seaweed, "nightly/agents", credentials=credentials(seaweed))
    outcome = publish_run(run_dir, target, retry=RetryPolicy(attempts=2, base_delay_s=0.05))
    assert outcome.published, outcome.message

    base = "nightly/agents/travel_agent_nightly"
    folder = f"{base}/20261120T023000Z-s3run01"
    for name, content_type in EXPECTED_TYPES.items():
        got_type, body = read_back(seaweed, f"{folder}/{name}")
        assert got_type == content_type, name
        assert body == (run_dir / name).read_bytes(), name
    assert read_results_json(run_dir / "results.json") == run
    ET.fromstring(read_back(seaweed, f"{folder}/junit.xml")[1])

    latest_type, latest = read_back(seaweed, f"{base}/latest.json")
    assert latest_type == "application/json"
    pointer = json.loads(latest)
    assert pointer["run_id"] == "s3run01"
    assert pointer["report"] == "20261120T023000Z-s3run01/report.html"
    assert pointer["report_url"] == outcome.report_url

    index_type, index = read_back(seaweed, f"{base}/index.html")
    assert index_type == "text/html; charset=utf-8"
    assert b'href="20261120T023000Z-s3run01/report.html"' in index

    manifest_type, manifest = read_back(seaweed, f"{base}/runs.json")
    assert manifest_type == "application/json"
    assert [r["run_id"] for r in json.loads(manifest)["runs"]] == ["s3run01"]

    assert outcome.report_url == f"{seaweed.endpoint_url}/{BUCKET}/{folder}/report.html"


def test_credentials_from_the_standard_chain(
    seaweed: SeaweedFS, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", seaweed.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", seaweed.secret_key)
    _, run_dir = make_run_dir(tmp_path, "envcreds")
    outcome = publish_run(run_dir, s3_target(seaweed, "from-env"))
    assert outcome.published, outcome.message
    keys = seaweed.client().list_objects_v2(Bucket=BUCKET, Prefix="from-env/")["Contents"]
    assert len(keys) == 8  # the run's three files, runs.json, index, explorer, trend, latest


def test_wrong_credentials_are_refused_without_retrying(seaweed: SeaweedFS, tmp_path: Path) -> None:
    _, run_dir = make_run_dir(tmp_path, "badcreds")
    wrong = S3Credentials(access_key_id="nobody", secret_access_key="nothing")  # type: ignore[arg-type]
    outcome = publish_run(run_dir, s3_target(seaweed, "denied", credentials=wrong))
    assert not outcome.published and outcome.attempts == 1
    assert "the store refused" in outcome.message and "InvalidAccessKeyId" in outcome.message
    assert (run_dir / PENDING_MARKER).is_file()


def test_store_down_keeps_the_run_and_publish_uploads_it_later(
    seaweed: SeaweedFS, tmp_path: Path
) -> None:
    run, run_dir = make_run_dir(tmp_path, "outage01")
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    target = s3_target(seaweed, "outage", credentials=credentials(seaweed))
    seaweed.stop()
    try:
        waits: list[float] = []
        outcome = publish_run(
            run_dir, target, retry=RetryPolicy(attempts=3, base_delay_s=0.05), sleep=waits.append
        )
    finally:
        seaweed.start()

    assert not outcome.published and outcome.attempts == 3 and len(waits) == 2
    assert "the store kept failing" in outcome.message
    assert f"The run is kept at {run_dir}" in outcome.message
    for name, body in before.items():  # the local copy is untouched
        assert (run_dir / name).read_bytes() == body
    pending = json.loads((run_dir / PENDING_MARKER).read_text())
    assert pending["target"]["bucket"] == BUCKET and pending["target"]["credentials"] is None
    assert seaweed.secret_key not in (run_dir / PENDING_MARKER).read_text()

    later = publish_pending(run_dir, credentials=credentials(seaweed))
    assert later.published, later.message
    folder = "outage/travel_agent_nightly/20261120T023000Z-outage01"
    for name, content_type in EXPECTED_TYPES.items():
        got_type, body = read_back(seaweed, f"{folder}/{name}")
        assert (got_type, body) == (content_type, before[name])
    assert json.loads(read_back(seaweed, "outage/travel_agent_nightly/latest.json")[1])[
        "run_id"
    ] == (run.run_id)
    assert not (run_dir / PENDING_MARKER).exists()


def test_a_run_that_failed_its_gate_is_published_but_not_latest(
    seaweed: SeaweedFS, tmp_path: Path
) -> None:
    """The folder's gates.json decides, on S3 as on a folder (tests/unit/publish/
    test_publish_edges.py runs the gates themselves)."""
    target = s3_target(seaweed, "gated", credentials=credentials(seaweed))
    _, passed = make_run_dir(tmp_path, "gate0001")
    assert publish_run(passed, target).published
    _, failed = make_run_dir(tmp_path / "later", "gate0002")
    reason = "pass rate 40% (8 of 20 trials) is below min_pass_rate 90%"
    write_gates_json(failed, GateRecord(failed=True, reasons=[reason]))
    outcome = publish_run(failed, target)
    assert outcome.published and f"it failed its gate ({reason})" in outcome.message
    base = "gated/travel_agent_nightly"
    runs = json.loads(read_back(seaweed, f"{base}/runs.json")[1])["runs"]
    assert {r["run_id"] for r in runs} == {"gate0001", "gate0002"}
    assert json.loads(read_back(seaweed, f"{base}/latest.json")[1])["run_id"] == "gate0001"
    folder = f"{base}/{failed.name}/gates.json"
    assert json.loads(read_back(seaweed, folder)[1])["failed"] is True
