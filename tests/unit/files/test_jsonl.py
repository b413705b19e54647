from datetime import UTC, datetime

from agentflow_eval.files.jsonl import JsonlWriter, iter_records
from agentflow_eval.models.results import Trial


def _trial(i: int) -> Trial:
    return Trial(case_id="c", trial_index=i, started_at=datetime.now(UTC))


def test_records_stream_back_and_a_torn_tail_is_cut(tmp_path):
    path = tmp_path / "trials.jsonl"
    with JsonlWriter[Trial](path) as writer:
        writer.write(_trial(0))
        writer.write(_trial(1))
    with path.open("a") as handle:
        handle.write('{"case_id": "c", "trial_ind')  # a process died mid-write
    assert [t.trial_index for t in iter_records(path, Trial)] == [0, 1]
    with JsonlWriter[Trial](path) as writer:  # reopening repairs the tail
        writer.write(_trial(2))
    assert [t.trial_index for t in iter_records(path, Trial)] == [0, 1, 2]
