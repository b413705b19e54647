"""One person's review of a run's judges, as the review flow and the terminal run it: the
answers an item takes, each label kept the moment it is given, the same sample drawn
again so a stopped review resumes with the trials it had left, other reviewers' labels
not counting as this reviewer's, and the judges measured against the labels at the end."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentflow_eval.errors import InputError
from agentflow_eval.files.results_json import write_results_json
from agentflow_eval.models.review_params import ReviewParams
from agentflow_eval.pipeline.review_session import (
    ReviewSession,
    label_of,
    open_review,
    verdict_choices,
)
from agentflow_eval.review.labels import Label, append_labels, read_labels
from tests.support.judged_runs import planted_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A finished run folder in an output folder (<root>/<eval set>/<run>)."""
    planted = planted_run(cases=10, trials=2, wrong_share=0.2, seed=3)
    folder = tmp_path / "runs" / "planted" / "20261121T090000Z-planted1"
    folder.mkdir(parents=True)
    write_results_json(planted.run, folder / "results.json")
    return folder


def _open(run_dir: Path, reviewer: str | None = "ann", size: int = 3) -> ReviewSession:
    return open_review(ReviewParams(run=str(run_dir), size=size, reviewer=reviewer))


def test_an_item_takes_pass_or_fail_or_its_scales_points(run_dir: Path) -> None:
    session = _open(run_dir)
    item = session.plan.items[0]
    assert verdict_choices(item) == ("pass", "fail", "skip")
    assert label_of(item, "pass") == "pass" and label_of(item, "skip") is None
    with pytest.raises(InputError, match="'maybe' is not an answer"):
        label_of(item, "maybe")
    rubric = item.model_copy(update={"score_range": (1.0, 5.0)})
    assert verdict_choices(rubric) == ("1", "2", "3", "4", "5", "skip")
    assert label_of(rubric, "4") == 4.0
    with pytest.raises(InputError):
        label_of(rubric, "pass")


def test_each_answer_is_kept_as_it_is_given_and_a_skip_keeps_nothing(run_dir: Path) -> None:
    session = _open(run_dir)
    (first, one), (second, two), *_ = session.remaining()
    assert (first, second) == (1, 2)
    session.answer(one, "fail", note="  wrong capital ")
    (kept,) = read_labels(run_dir)
    assert (kept.case_id, kept.trial, kept.criterion) == one.key
    assert kept.content_key == one.content_key and kept.label == "fail"
    assert kept.reviewer == "ann" and kept.note == "wrong capital"
    assert session.answer(two, "skip") is None
    assert len(read_labels(run_dir)) == 1
    # the label bank of the output folder holds it too, for later runs
    assert len(list((run_dir.parent.parent / "label-bank").glob("*/*.jsonl"))) == 1
    with pytest.raises(InputError, match="reviewer's name"):
        _open(run_dir, reviewer=None).answer(two, "pass")


def test_a_stopped_review_resumes_with_the_trials_it_had_left(run_dir: Path) -> None:
    session = _open(run_dir)
    sample = [item.key for item in session.plan.items]
    assert session.opening_line().startswith(f"{len(sample)} trials to review")
    for _, item in list(session.remaining())[:2]:
        session.answer(item, "pass")

    again = _open(run_dir)
    assert [item.key for item in again.plan.items] == sample  # the same sample
    assert again.opening_line() == f"2 of {len(sample)} labelled, resuming"
    assert [position for position, _ in again.remaining()] == list(range(3, len(sample) + 1))

    # another reviewer is asked about the same trials; with no reviewer named, anyone's
    # label counts
    assert len(list(_open(run_dir, reviewer="bob").remaining())) == len(sample)
    assert len(list(_open(run_dir, reviewer=None).remaining())) == len(sample) - 2


def test_finishing_measures_the_judges_against_the_labels(run_dir: Path) -> None:
    session = _open(run_dir, size=6)
    for _, item in session.remaining():
        session.answer(item, item.verdict)  # the reviewer agrees with every verdict
    run = session.finish()
    (agreement,) = run.judge_agreement
    assert agreement.labels == 6 and agreement.reviewers == ["ann"]
    assert agreement.agreement is not None and agreement.agreement.value == 1.0
    written = json.loads((run_dir / "results.json").read_text())
    assert written["judge_agreement"][0]["labels"] == 6


def test_a_folder_that_is_not_a_finished_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a finished run folder"):
        open_review(ReviewParams(run=str(tmp_path)))


def test_content_labelled_in_another_run_is_not_asked_again(run_dir: Path) -> None:
    first = _open(run_dir).plan.items[0]
    earlier = Label(
        run_id="an-earlier-night",
        case_id=first.case_id,
        trial=first.trial,
        criterion=first.criterion,
        content_key=first.content_key,
        label="pass",
        reviewer="bob",
        labelled_at=datetime(2026, 11, 20, tzinfo=UTC),
    )
    append_labels(run_dir, [earlier])  # as the run's measuring copies it from the bank
    session = _open(run_dir)
    assert first.content_key not in {item.content_key for item in session.plan.items}
    assert session.done == 0
    assert any(stratum.labelled == 1 for stratum in session.plan.strata)
