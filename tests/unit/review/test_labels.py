"""labels.jsonl: appended a line at a time, read back whole, a torn line survived."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentflow_eval.review.labels import (
    LABELS_FILE,
    Label,
    LabelsFileError,
    append_labels,
    labelled_keys,
    read_labels,
)

AT = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)


def label(case: str = "c1", trial: int = 0, value: str | float = "pass", key: str | None = "k1"):
    return Label(
        run_id="r1",
        case_id=case,
        trial=trial,
        criterion="final_response_match_v2",
        content_key=key,
        label=value,  # type: ignore[arg-type]
        reviewer="ana",
        labelled_at=AT,
    )


def test_labels_appended_one_call_at_a_time_read_back_in_order(tmp_path: Path) -> None:
    append_labels(tmp_path, [label("c1")])
    append_labels(tmp_path, [label("c2", value="fail", key="k2"), label("c3", value=4.0)])
    back = read_labels(tmp_path)
    assert [(x.case_id, x.label) for x in back] == [("c1", "pass"), ("c2", "fail"), ("c3", 4.0)]
    assert labelled_keys(back) == {"k1", "k2"}
    assert read_labels(tmp_path / "elsewhere") == []


def test_a_torn_last_line_is_skipped_and_cut_before_the_next_append(tmp_path: Path) -> None:
    append_labels(tmp_path, [label("c1")])
    with (tmp_path / LABELS_FILE).open("a") as handle:
        handle.write('{"run_id": "r1", "case_')  # the process died mid-line
    assert [x.case_id for x in read_labels(tmp_path)] == ["c1"]
    append_labels(tmp_path, [label("c2")])
    assert [x.case_id for x in read_labels(tmp_path)] == ["c1", "c2"]


def test_a_line_that_is_not_a_label_is_named_by_file_and_line(tmp_path: Path) -> None:
    append_labels(tmp_path, [label("c1")])
    with (tmp_path / LABELS_FILE).open("a") as handle:
        handle.write('{"run_id": "r1"}\n')
    with pytest.raises(LabelsFileError, match=rf"{LABELS_FILE}, line 2: not a label"):
        read_labels(tmp_path)


def test_a_scale_label_passes_at_the_threshold() -> None:
    assert label(value=3.0).passes(3.0) and not label(value=2.5).passes(3.0)
    assert label(value="pass").passes(None) and not label(value="fail").passes(0.0)
