"""Only traces not scored before are read: the cursor kept in the results store (a marker
per object, created only where none is) makes a second run read nothing again, two runs
at once split the objects between them without scoring one twice, and a batch that
stopped goes on with the objects it had claimed."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from pathlib import Path

import pytest

from agentflow_eval.errors import StoreError
from agentflow_eval.models.traces_request import TracesRequest
from agentflow_eval.pipeline import score_traces as scoring
from agentflow_eval.pipeline.score_traces import TracesOutcome, score_traces
from agentflow_eval.storage.local import LocalStore
from tests.support.otlp_traces import AgentTrace, export_request, write_s3_layout
from tests.unit.traces.conftest import Score, scored_trace_ids


def _objects(source: Path, count: int, start: int = 0) -> list[str]:
    return [
        t.trace_id
        for n in range(start, start + count)
        for t in [AgentTrace(f"trace-{n}", tool=None)]
        if write_s3_layout(source, [export_request([t])], start=n)
    ]


def test_a_second_run_reads_none_of_what_the_first_read(tmp_path: Path, score: Score) -> None:
    source, out = tmp_path / "src", tmp_path / "out"
    first_ids = _objects(source, 5)

    first = score(source, out)
    second = score(source, out)
    later_ids = _objects(source, 2, start=5)
    third = score(source, out)

    assert sorted(scored_trace_ids(first)) == sorted(first_ids)
    assert second.intake.counts.objects_read == 0 and not second.versions
    assert not second.batch_dir.exists()  # a batch that read nothing leaves nothing
    assert second.lines() == [f"{source}: no new trace objects"]
    assert sorted(scored_trace_ids(third)) == sorted(later_ids)
    markers = list(LocalStore(out).list_objects("traces-cursor/"))
    assert len(markers) == 7


def test_two_runs_at_once_score_every_trace_exactly_once(tmp_path: Path, score: Score) -> None:
    source, out = tmp_path / "src", tmp_path / "out"
    expected = _objects(source, 40)
    start = threading.Barrier(2)
    outcomes: list[TracesOutcome] = []

    def one_run() -> None:
        start.wait()
        outcomes.append(score(source, out))

    threads = [threading.Thread(target=one_run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    scored = Counter(i for outcome in outcomes for i in scored_trace_ids(outcome))
    assert sorted(scored) == sorted(expected)
    assert set(scored.values()) == {1}
    reads = [o.intake.counts.objects_read for o in outcomes]
    elsewhere = [o.intake.counts.objects_claimed_elsewhere for o in outcomes]
    assert sum(reads) == 40
    assert all(r + e <= 40 for r, e in zip(reads, elsewhere, strict=True))


def test_max_objects_leaves_the_rest_for_the_next_run(tmp_path: Path, score: Score) -> None:
    source, out = tmp_path / "src", tmp_path / "out"
    expected = _objects(source, 5)

    first = score(source, out, max_objects=3)
    second = score(source, out, max_objects=3)

    assert first.intake.counts.objects_left == 2
    assert "2 left for the next run" in first.lines()[0]
    assert sorted(scored_trace_ids(first) + scored_trace_ids(second)) == sorted(expected)


class _Unplugged(StoreError):
    pass


def test_a_batch_stopped_by_its_store_goes_on_where_it_was(
    tmp_path: Path, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, out = tmp_path / "src", tmp_path / "out"
    expected = _objects(source, 12)
    opened: list[str] = []
    real_open = LocalStore.open_listed

    def failing_open(self: LocalStore, key: str):  # type: ignore[no-untyped-def]
        opened.append(key)
        if len(opened) == 7:
            raise _Unplugged("connection reset", transient=True)
        return real_open(self, key)

    request = TracesRequest(source=str(source), config=str(config), output_dir=str(out))
    monkeypatch.setattr(LocalStore, "open_listed", failing_open)
    monkeypatch.setattr(scoring, "new_batch_id", lambda: "batch-one")
    with pytest.raises(_Unplugged):
        asyncio.run(score_traces(request))
    batch = next((out / "traces").glob("*/batch-one"))
    assert not (batch / "intake.json").exists()

    monkeypatch.undo()
    resumed = asyncio.run(score_traces(request.updated(resume=str(batch))))
    again = asyncio.run(score_traces(request))

    assert sorted(scored_trace_ids(resumed)) == sorted(expected)
    assert resumed.intake.counts.objects_read == 12
    assert again.intake.counts.objects_read == 0


def test_a_retried_flow_run_resumes_the_batch_named_after_it(tmp_path: Path, config: Path) -> None:
    source, out = tmp_path / "src", tmp_path / "out"
    expected = _objects(source, 3)
    request = TracesRequest(source=str(source), config=str(config), output_dir=str(out))

    first = asyncio.run(score_traces(request, batch_id="flow-run-1"))
    retried = asyncio.run(score_traces(request, batch_id="flow-run-1"))

    assert retried.batch_dir == first.batch_dir
    assert sorted(scored_trace_ids(retried)) == sorted(expected)
    assert [v.outcome.run_dir for v in retried.versions] == [
        v.outcome.run_dir for v in first.versions
    ]
