"""Aggregating judged.jsonl without keeping its trials: the same summary as
:func:`aggregate`, and every case's trials found again through byte offsets."""

from __future__ import annotations

from pathlib import Path

from support.judged_file import write_judged_file

from agentflow_eval.files.jsonl import iter_lines_with_offsets, iter_records, read_line_at
from agentflow_eval.models.results import TrialResult
from agentflow_eval.run.aggregate import aggregate, aggregate_judged


def test_offsets_find_the_lines_iter_records_reads(tmp_path: Path) -> None:
    judged = write_judged_file(tmp_path).paths.judged
    found = list(iter_lines_with_offsets(judged))
    records = list(iter_records(judged, TrialResult))
    assert [TrialResult.model_validate_json(line) for _, line in found] == records
    assert not judged.read_bytes().endswith(b"\n")  # the torn tail is there, and left out
    with judged.open("rb") as handle:
        for offset, line in reversed(found):
            assert read_line_at(handle, offset) == line


def test_streamed_summary_equals_aggregate_and_counts_each_trial_once(tmp_path: Path) -> None:
    file = write_judged_file(tmp_path, trials=3)
    seen: list[TrialResult] = []
    run, index = aggregate_judged(
        file.eval_set,
        file.config,
        file.paths.judged,
        file.meta,
        on_trial=seen.append,
        finished_at=file.finished_at,
    )
    in_memory = aggregate(
        file.eval_set,
        file.config,
        iter_records(file.paths.judged, TrialResult),
        file.meta,
        finished_at=file.finished_at,
    )
    assert run.trials == []
    assert run == in_memory.model_copy(update={"trials": []})
    # the stranger's case and the second line for an existing trial are left out
    assert in_memory.trials == file.counted
    assert run.totals.trials == len(file.counted) == len(index) == len(seen)
    assert sorted(seen, key=lambda r: r.trial.key) == file.counted
    for case in run.cases:
        assert case.runs == 3
        assert index.trials_of(case.case_id) == [
            r for r in file.counted if r.trial.case_id == case.case_id
        ]
    assert index.trials_of("not_in_this_eval_set") == []
    lines = [TrialResult.model_validate_json(line) for line in index.lines_in_key_order()]
    assert lines == file.counted


def test_the_first_line_written_for_a_trial_is_the_one_that_counts(tmp_path: Path) -> None:
    file = write_judged_file(tmp_path)
    first = file.counted[0]
    again = first.model_copy(update={"status": "errored"})
    run = aggregate(file.eval_set, file.config, [first, again, *file.counted[1:]], file.meta)
    case = next(c for c in run.cases if c.case_id == first.trial.case_id)
    assert case.runs == 3 and run.trials == file.counted
    assert run.totals.errored == sum(r.status == "errored" for r in file.counted)
