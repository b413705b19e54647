"""A batch's first version against the window an earlier batch scored: found in the
published history and compared, and, when the earlier run's results cannot be read, the
comparison says so (kind ``unavailable``, naming the file) while the batch is scored as
ever."""

from __future__ import annotations

from pathlib import Path

from tests.unit.traces.conftest import Score
from tests.unit.traces.test_versions import _version, _write


def _two_batches(tmp_path: Path, score: Score, *, spoil_history: bool) -> Score:
    published = str(tmp_path / "published")
    _write(tmp_path / "src", _version("old", "1.0", passing=28, failing=2, start=0))
    first = score(tmp_path / "src", tmp_path / "out", publish_to=published)
    assert [v.recording.agent_version for v in first.versions] == ["1.0"]
    if spoil_history:
        (results,) = (tmp_path / "published" / "traces-src").glob("*/results.json")
        results.write_text("{not json")
    # the next batch: new traces only (the cursor skips the first batch's)
    _write(tmp_path / "src" / "later", _version("new", "1.1", passing=12, failing=18, start=100))
    return score(tmp_path / "src", tmp_path / "out", publish_to=published)


def test_the_next_batch_is_compared_with_the_window_before_it(tmp_path: Path, score: Score) -> None:
    second = _two_batches(tmp_path, score, spoil_history=False)
    (version,) = second.versions
    assert version.recording.agent_version == "1.1"
    record = version.comparison
    assert record is not None and record.problem is None and record.regressed
    assert record.baseline.startswith("agent version 1.0, traces ")


def test_an_unreadable_earlier_window_is_said_and_the_batch_is_scored(
    tmp_path: Path, score: Score
) -> None:
    second = _two_batches(tmp_path, score, spoil_history=True)
    (version,) = second.versions
    run = version.outcome.run
    assert (run.totals.passed, run.totals.trials) == (12, 30)  # scored as ever
    record = version.comparison
    assert record is not None and record.problem is not None
    assert record.problem.kind == "unavailable" and "results.json" in record.problem.message
    assert record.baseline == "the window before" and not record.regressed
