"""One person's review of a run's judges, as both doors run it (the review flow in the
Prefect UI, ``agentflow-eval review`` at a terminal): the run read once, the sample
drawn, the trials this reviewer has labelled already left out, each answer appended to
the run's labels as it is given, and the judges' agreement with the labels at the end.

The sample is drawn the same way each time (the same run, options and seed), so a review
stopped midway and started again asks for the trials it had left: "N of M labelled,
resuming". Content labelled in another run (an earlier night's, found through the label
bank) is never asked again. Other reviewers' labels of this run's trials do not count as
this reviewer's: several people may label one trial, and their agreement with each other
is measured.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from agentflow_eval.errors import InputError, StoreError
from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.models.results import RunResult
from agentflow_eval.models.review_params import ReviewParams
from agentflow_eval.pipeline.agreement import refresh_agreement
from agentflow_eval.review.bank import LabelBank, output_root_of
from agentflow_eval.review.labels import Label, read_labels
from agentflow_eval.review.recording import record_labels
from agentflow_eval.review.sampling import ReviewItem, ReviewPlan, plan_review
from agentflow_eval.run.paths import RunPaths

__all__ = [
    "SKIP",
    "LabelValue",
    "ReviewSession",
    "label_of",
    "labelled_before",
    "open_review",
    "scale_of",
    "verdict_choices",
]

SKIP = "skip"
"""The answer that labels nothing (the reviewer cannot tell): the trial is asked again in
the next review."""

LabelValue = Literal["pass", "fail"] | float


def scale_of(item: ReviewItem) -> tuple[int, int] | None:
    """The points a reviewer scores ``item`` on, when its criterion is scored on a scale
    other than [0, 1] (ADK's 1 to 5); ``None``: a pass or a fail."""
    low, high = item.score_range
    if (low, high) == (0.0, 1.0):
        return None
    return math.ceil(low), math.floor(high)


def verdict_choices(item: ReviewItem) -> tuple[str, ...]:
    """The answers a reviewer may give on ``item``: pass or fail, or each point of the
    criterion's scale (1 … 5), and skip."""
    scale = scale_of(item)
    if scale is None:
        return ("pass", "fail", SKIP)
    low, high = scale
    return (*(str(point) for point in range(low, high + 1)), SKIP)


def label_of(item: ReviewItem, answer: str) -> LabelValue | None:
    """The label ``answer`` gives ``item`` (``None``: skipped); refused when it is not
    one of the item's choices."""
    if answer not in verdict_choices(item):
        shown = ", ".join(verdict_choices(item))
        raise InputError(f"{answer!r} is not an answer to this trial; expected one of {shown}")
    if answer == SKIP:
        return None
    if answer in ("pass", "fail"):
        return "pass" if answer == "pass" else "fail"
    return float(answer)


@dataclass
class ReviewSession:
    """A review under way: the run, its sample, and what this reviewer labelled."""

    run_dir: Path
    run: RunResult
    plan: ReviewPlan
    reviewer: str | None
    """Who reviews; ``None``: named in each answer (the review flow's form), and then any
    reviewer's label of a trial counts as done."""
    labels: list[Label] = field(default_factory=list)
    """The run's labels, those given in this session included."""
    bank: LabelBank | None = None
    """The label bank each label goes to as well (the output folder's the run is in, or
    the pool's shared storage), where later runs find it by the content it judged."""
    given: int = 0
    """Labels given in this session."""
    notes: list[str] = field(default_factory=list)
    """What went wrong without stopping the review (a label bank that failed)."""

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def total(self) -> int:
        return len(self.plan.items)

    @property
    def done(self) -> int:
        return sum(1 for item in self.plan.items if self.is_labelled(item))

    def is_labelled(self, item: ReviewItem) -> bool:
        """Whether this reviewer (any reviewer, when none is named) has labelled
        ``item``: the same trial and criterion, or the same judged content."""
        return any(
            (self.reviewer is None or label.reviewer == self.reviewer)
            and (
                (label.case_id, label.trial, label.criterion) == item.key
                or (item.content_key is not None and label.content_key == item.content_key)
            )
            for label in self.labels
        )

    def opening_line(self) -> str:
        """What the review says as it starts: how many trials, how many are labelled."""
        if not self.plan.items:
            return f"nothing to review: run {self.run_id} has no judged trial to label"
        if self.done:
            return f"{self.done} of {self.total} labelled, resuming"
        return f"{self.total} trials to review. {self.plan.needed_for_width}"

    def remaining(self) -> Iterator[tuple[int, ReviewItem]]:
        """The sampled trials left to label, each with its place in the sample (from 1);
        a trial labelled while the review goes on is passed over."""
        for position, item in enumerate(self.plan.items, start=1):
            if not self.is_labelled(item):
                yield position, item

    def answer(
        self, item: ReviewItem, answer: str, *, note: str = "", reviewer: str | None = None
    ) -> Label | None:
        """Record ``answer`` on ``item`` by ``reviewer`` (default: the session's),
        appended to the run's labels at once; ``None`` for a skip, which records
        nothing."""
        value = label_of(item, answer)
        who = (reviewer or self.reviewer or "").strip()
        if not who:
            raise InputError("a label needs the reviewer's name")
        if value is None:
            return None
        label = Label(
            run_id=self.run_id,
            case_id=item.case_id,
            trial=item.trial,
            criterion=item.criterion,
            content_key=item.content_key,
            label=value,
            reviewer=who,
            note=note.strip(),
            labelled_at=datetime.now(UTC),
        )
        try:
            record_labels(self.run_dir, [label], self.bank)
        except StoreError as exc:  # kept in the folder: the next measuring banks it
            note = f"labels not added to the label bank: {exc}"
            if note not in self.notes:
                self.notes.append(note)
        self.labels.append(label)
        self.given += 1
        return label

    def finish(self) -> RunResult:
        """The run's judges measured against every label it has now (and the bank's for
        the content it judged): its results.json and report.html written again with the
        figures; the run as written."""
        self.run = refresh_agreement(self.run_dir, bank=self.bank)
        return self.run


def open_review(params: ReviewParams, *, run: RunResult | None = None) -> ReviewSession:
    """The review ``params`` ask for: the run read (refused in one line when it is not a
    finished run folder; ``run``: its results, read already), the sample drawn, the
    run's labels read; its labels go to the label bank of the output folder the run
    folder is in (set ``bank`` to another).

    The sample leaves out content labelled in other runs, but not this run's own labels,
    so the same options draw the same trials each time: a stopped review resumes with
    those it had left, and a second reviewer is asked about the same trials as the
    first."""
    run_dir = Path(params.run).resolve()
    paths = RunPaths(run_dir)
    if not paths.results.is_file():
        raise InputError(
            f"{params.run}: not a finished run folder (no results.json); pass the folder a "
            "run printed as 'results in ...'"
        )
    if run is None:
        run = read_results_json(paths.results)
    labels = read_labels(run_dir)
    plan = plan_review(
        run,
        criteria=params.criteria or None,
        size=params.size,
        width=params.width,
        disagreeing_first=params.disagreeing_first,
        already_labelled=labelled_before(labels, run.run_id),
        seed=params.seed,
    )
    root = output_root_of(run_dir, run.eval_set_id)
    bank = LabelBank.in_folder(root) if root is not None else None
    return ReviewSession(run_dir, run, plan, params.reviewer, labels, bank)


def labelled_before(labels: Sequence[Label], run_id: str) -> set[str]:
    """The judged content labelled in other runs (an earlier night's, the run a re-judge
    re-judged: their labels reach this run's folder when it is measured): never asked
    again. This run's own labels are not among them, so the sample stays the same while
    they are given."""
    return {
        label.content_key
        for label in labels
        if label.run_id != run_id and label.content_key is not None
    }
