"""Traces in a real S3-compatible store (SeaweedFS): the store lists a prefix page by page
with the Collector's partition keys, opens what it listed, and creates a marker only where
none is (``If-None-Match``); traces under a bucket prefix are scored with the cursor kept
in the results bucket, two runs at once score each trace once, and a second run reads none
of them again."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.seaweed import SeaweedFS

from agentflow_eval.models.request import S3Options
from agentflow_eval.models.traces_request import TracesRequest
from agentflow_eval.pipeline.score_traces import TracesOutcome, score_traces
from agentflow_eval.storage.base import ListingStore
from agentflow_eval.storage.s3 import S3Store
from agentflow_eval.storage.targets import parse_target
from tests.support.otlp_traces import AgentTrace, export_request, s3_exporter_key

pytestmark = pytest.mark.e2e

TRACES = "agentflow-traces"
RESULTS = "agentflow-trace-results"


@pytest.fixture(scope="module")
def seaweed(shared_seaweed: SeaweedFS) -> SeaweedFS:
    client = shared_seaweed.client()
    for bucket in (TRACES, RESULTS):
        client.create_bucket(Bucket=bucket)
    return shared_seaweed


@pytest.fixture
def s3(seaweed: SeaweedFS, monkeypatch: pytest.MonkeyPatch) -> S3Options:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", seaweed.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", seaweed.secret_key)
    return S3Options(endpoint_url=seaweed.endpoint_url, region=seaweed.region, path_style=True)


def _store(s3: S3Options, url: str) -> S3Store:
    target = parse_target(
        url, endpoint_url=s3.endpoint_url, region=s3.region, path_style=s3.path_style
    )
    store = S3Store(target)  # type: ignore[arg-type]
    assert isinstance(store, ListingStore)
    return store


def test_an_s3_prefix_lists_page_by_page_opens_what_it_listed_and_creates_once(
    seaweed: SeaweedFS, s3: S3Options
) -> None:
    client = seaweed.client()
    keys = [
        f"listing/year=2026/month=01/day=01/hour=00/minute={n % 60:02d}/t{n:05d}.json"
        for n in range(1050)
    ]
    for key in keys:
        client.put_object(Bucket=TRACES, Key=key, Body=b"{}")
    store = _store(s3, f"s3://{TRACES}/listing")

    listed = list(store.list_objects())

    assert sorted(o.key for o in listed) == sorted(k.removeprefix("listing/") for k in keys)
    stream = store.open_listed(listed[0].key)
    assert stream is not None and stream.read() == b"{}"
    assert store.open_listed("year=2026/none.json") is None

    results = _store(s3, f"s3://{RESULTS}/race")
    barrier = threading.Barrier(6)
    won: list[int] = []

    def claim(n: int) -> None:
        barrier.wait()
        if results.create("markers/one", f"{n}".encode(), "text/plain"):
            won.append(n)

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1
    assert results.get("markers/one") == f"{won[0]}".encode()


def _score(request: TracesRequest) -> TracesOutcome:
    return asyncio.run(score_traces(request))


def _trace_ids(outcome: TracesOutcome) -> list[str]:
    ids = []
    for version in outcome.intake.versions:
        with (Path(version.folder) / "traces.jsonl").open() as handle:
            ids += [json.loads(line)["trace_id"] for line in handle]
    return ids


def test_traces_in_a_bucket_are_scored_once_across_concurrent_runs(
    seaweed: SeaweedFS, s3: S3Options, tmp_path: Path
) -> None:
    client = seaweed.client()
    traces = [AgentTrace(f"s3-{n}", tool=None if n % 3 else "get_weather") for n in range(30)]

    for n, trace in enumerate(traces):
        key = s3_exporter_key(
            datetime(2026, 1, 1, 12, n % 5, tzinfo=UTC), f"{n:04d}", prefix="otel/"
        )
        client.put_object(Bucket=TRACES, Key=key, Body=json.dumps(export_request([trace])).encode())
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"within_budget": {"max_tool_calls": 0}}}))

    def request(out: str) -> TracesRequest:
        return TracesRequest(
            source=f"s3://{TRACES}/otel",
            config=str(config),
            output_dir=str(tmp_path / out),
            publish_to=f"s3://{RESULTS}/scores",
            s3=s3,
        )

    outcomes: list[TracesOutcome] = []
    barrier = threading.Barrier(2)

    def one(out: str) -> None:
        barrier.wait()
        outcomes.append(_score(request(out)))

    threads = [threading.Thread(target=one, args=(f"worker-{n}",)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    again = _score(request("worker-3"))

    scored = Counter(i for outcome in outcomes for i in _trace_ids(outcome))
    assert sorted(scored) == sorted(t.trace_id for t in traces)
    assert set(scored.values()) == {1}
    assert again.intake.counts.objects_read == 0
    markers = client.list_objects_v2(Bucket=RESULTS, Prefix="scores/traces-cursor/")
    assert markers["KeyCount"] == 30
    published = client.list_objects_v2(Bucket=RESULTS, Prefix="scores/traces-otel/")
    names = {item["Key"].rsplit("/", 1)[-1] for item in published.get("Contents", [])}
    assert {"results.json", "report.html"} <= names
