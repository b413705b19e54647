"""A person's verdict on one judged trial, and the run folder's ``labels.jsonl`` that keeps
them.

A label names the trial (run, case, trial index as ``results.json`` numbers it, from 0),
the criterion, and the judge cache's content key of what the judge was shown
(``details["content_key"]`` of the criterion's verdict): the key is what later runs and
re-judged runs find the label by, so the same judged content is never asked twice.

``labels.jsonl`` is append-only, one label a line, each written with a single ``write``
on a file opened for appending and flushed to disk before the call returns: a review
stopped at any point keeps every label it gave, and a torn last line (a process killed
mid-write) is cut off before the next append and skipped when read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentflow_eval.errors import InputError
from agentflow_eval.files.jsonl import repair_tail

__all__ = [
    "LABELS_FILE",
    "HumanVerdict",
    "Label",
    "LabelsFileError",
    "append_labels",
    "append_labels_whole",
    "labelled_keys",
    "read_labels",
]

LABELS_FILE = "labels.jsonl"
"""The labels of a run, in its folder (and published with it)."""

HumanVerdict = Literal["pass", "fail"]


class LabelsFileError(InputError):
    """A labels file holds a line that is not a label."""


class Label(BaseModel):
    """One person's verdict on one criterion's judgement of one trial."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    run_id: str
    """The run whose trial was labelled."""
    case_id: str
    """The case."""
    trial: int = Field(ge=0)
    """The trial's index within the case, as ``results.json`` numbers it (``trial_index``,
    from 0)."""
    criterion: str
    """The criterion's name in the config."""
    content_key: str | None
    """The judge cache's content key of what the judge was shown (null for a criterion
    that records none: a label of it holds for this run's trial only)."""
    label: HumanVerdict | float
    """``pass`` or ``fail``; for a criterion scored on a scale (a rubric, ADK's 1 to 5),
    the person's score on it, which passes at the criterion's threshold."""
    reviewer: str = Field(min_length=1)
    """Who labelled it."""
    note: str = ""
    """What the reviewer wrote beside it."""
    labelled_at: datetime
    """When it was labelled (UTC)."""

    def passes(self, threshold: float | None) -> bool:
        """Whether the person passes the trial: ``pass``, or a score at or above the
        criterion's threshold."""
        if isinstance(self.label, str):
            return self.label == "pass"
        return threshold is not None and self.label >= threshold


def append_labels(run_dir: Path, labels: Sequence[Label]) -> None:
    """Add ``labels`` to ``run_dir``'s labels file, one line each, each line in a single
    write, flushed to disk before returning (call it after each label: a review resumed
    later finds every label given before it stopped)."""
    if not labels:
        return
    path = run_dir / LABELS_FILE
    repair_tail(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    try:
        for label in labels:
            os.write(fd, (label.model_dump_json() + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def append_labels_whole(run_dir: Path, labels: Sequence[Label]) -> None:
    """Add ``labels`` to ``run_dir``'s labels file all at once or not at all: the file
    with them is written beside it and renamed over it (an import of many labels never
    leaves some of them written). A label appended by another process while this one
    writes can be lost; imports are for labels made elsewhere, not during a review."""
    if not labels:
        return
    path = run_dir / LABELS_FILE
    repair_tail(path)
    try:
        held = path.read_bytes()
    except FileNotFoundError:
        held = b""
    added = "".join(label.model_dump_json() + "\n" for label in labels).encode("utf-8")
    tmp = run_dir / f".{LABELS_FILE}.{os.getpid()}.tmp"
    try:
        with tmp.open("wb") as handle:
            handle.write(held + added)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_labels(run_dir: Path) -> list[Label]:
    """The labels in ``run_dir``'s labels file, in the order given (none when it has no
    file). A torn last line is skipped; any other line that is not a label is refused
    (:class:`LabelsFileError`, naming the file and line)."""
    return parse_label_lines(run_dir / LABELS_FILE)


def parse_label_lines(path: Path) -> list[Label]:
    """The labels one a line in ``path`` (a labels file or a label bank's entry)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return labels_from_bytes(data, str(path))


def labels_from_bytes(data: bytes, source: str) -> list[Label]:
    """The labels one a line in ``data``, read from ``source`` (named in a refusal)."""
    lines = data.split(b"\n")
    complete = lines[:-1]  # what follows the last newline is a torn line, or nothing
    labels: list[Label] = []
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            labels.append(Label.model_validate_json(line))
        except ValidationError as exc:
            raise LabelsFileError(
                f"{source}, line {number}: not a label: {validation_reason(exc)}"
            ) from None
    return labels


def validation_reason(exc: ValidationError) -> str:
    """The first thing pydantic refused, in a line: the field and why."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


def labelled_keys(labels: Iterable[Label]) -> set[str]:
    """The content keys ``labels`` cover (the ones a review does not ask again)."""
    return {label.content_key for label in labels if label.content_key is not None}
