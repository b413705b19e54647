"""Reading a run's summaries from results.json without its trials."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from support.sample_results import sample_run

from agentflow_eval.compare.reading import read_run_summary, run_summary_from_stream
from agentflow_eval.files.results_json import (
    ResultsFileError,
    read_results_json,
    write_results_json,
)
from agentflow_eval.models.results import SCHEMA_VERSION, RunResult


def _without_trials(run: RunResult) -> RunResult:
    return run.model_copy(update={"trials": [], "notes": []})


class CountingStream(io.BytesIO):
    """A stream that remembers how many bytes were read from it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size: int | None = -1, /) -> bytes:
        chunk = super().read(size)
        self.bytes_read += len(chunk)
        return chunk


@pytest.fixture(scope="module")
def big_run() -> RunResult:
    run, _ = sample_run(cases=8, trials=20)
    return run


def test_summary_equals_the_full_read_without_trials(big_run: RunResult, tmp_path: Path) -> None:
    path = write_results_json(big_run, tmp_path / "results.json")
    summary = read_run_summary(path)
    assert summary.trials == [] and summary.notes == []
    assert summary == _without_trials(read_results_json(path))
    assert len(summary.cases) == 8 and summary.cases[3].runs == 20


def test_reading_stops_before_the_trials(big_run: RunResult, tmp_path: Path) -> None:
    data = write_results_json(big_run, tmp_path / "results.json").read_bytes()
    trials_at = data.index(b'\n  "trials": [')
    assert trials_at < len(data) // 4  # the trials are most of the file
    # a stream read in small pieces, so stopping early shows
    stream = CountingStream(data)
    original_read = stream.read
    stream.read = lambda size=-1, /: original_read(min(size, 4096))  # type: ignore[method-assign]
    summary = run_summary_from_stream(stream, "results.json")
    assert summary == _without_trials(big_run)
    assert trials_at <= stream.bytes_read < trials_at + 4096 + len(b'\n  "trials": ')


def test_compact_json_is_read_whole(big_run: RunResult, tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(big_run.model_dump_json(), encoding="utf-8")
    assert read_run_summary(path) == _without_trials(big_run)


def test_trials_before_cases_are_read_whole(big_run: RunResult, tmp_path: Path) -> None:
    # an indented file whose trials come before its cases: stopping at the trials would
    # lose the cases, so the reader must notice and read it all
    raw = json.loads(big_run.model_dump_json())
    reordered = {"trials": raw.pop("trials"), **raw}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(reordered, indent=2), encoding="utf-8")
    assert read_run_summary(path) == _without_trials(big_run)


def test_a_label_holding_the_marker_text_is_harmless(tmp_path: Path) -> None:
    run, _ = sample_run()
    run.cases[0].label = 'tricky\n  "trials": [ label'
    path = write_results_json(run, tmp_path / "results.json")
    assert read_run_summary(path) == _without_trials(run)


def test_a_run_without_trials(tmp_path: Path) -> None:
    run, _ = sample_run()
    bare = _without_trials(run)
    path = write_results_json(bare, tmp_path / "results.json")
    assert read_run_summary(path) == bare


def test_bad_files_name_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": "1.0", "cases": [', encoding="utf-8")
    with pytest.raises(ResultsFileError, match=r"broken\.json: invalid JSON at line 1"):
        read_run_summary(broken)
    future = tmp_path / "future.json"
    run, _ = sample_run()
    future.write_text(
        run.model_dump_json(indent=2).replace(
            f'"schema_version": "{SCHEMA_VERSION}"', '"schema_version": "9.0"'
        )
    )
    with pytest.raises(ResultsFileError, match=r"future\.json: results schema version '9\.0'"):
        read_run_summary(future)
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{\n  "schema_version": "1.0",\n  "cases": [],\n  "trials": []\n}')
    with pytest.raises(ResultsFileError, match=r"wrong\.json: does not match the results schema"):
        read_run_summary(wrong)
    with pytest.raises(ResultsFileError, match="no such file"):
        read_run_summary(tmp_path / "missing.json")
