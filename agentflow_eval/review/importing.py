"""Labels made elsewhere (a spreadsheet, another tool), imported into a run: a CSV file
with a header row, or JSON lines, one label a row:

    case,trial,criterion,label,reviewer,note
    weather_lookup,0,final_response_match_v2,pass,ana,
    weather_lookup,1,final_response_match_v2,fail,ana,says 72°F; the reference 75°F

``case`` (or ``case_id``) and ``trial`` name a trial of the run (``trial`` as
``results.json`` numbers it, ``trial_index``: from 0), ``criterion`` a criterion that gave
it a pass or fail, ``label`` is ``pass`` or ``fail`` (or, for a criterion scored on a
scale, a score on it), ``reviewer`` who labelled it; ``note`` and ``labelled_at`` (ISO
8601; default: now) may be left out. Every row is checked before anything is written: the
first bad one is refused in a line naming the file and the line, and nothing is
written. A row identical to a label the run has (same trial, criterion, reviewer, label
and note) is skipped, so importing a file twice adds nothing.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentflow_eval.errors import InputError
from agentflow_eval.models.results import RunResult
from agentflow_eval.review.items import JudgedVerdict, judged_verdicts
from agentflow_eval.review.labels import Label, validation_reason

__all__ = ["COLUMNS", "ImportedLabels", "LabelImportError", "read_label_rows"]

COLUMNS = ("case", "trial", "criterion", "label", "reviewer", "note", "labelled_at")
"""The columns a row may have (``case_id`` is ``case``); ``note`` and ``labelled_at``
may be left out."""
_REQUIRED = ("case", "trial", "criterion", "label", "reviewer")


class LabelImportError(InputError):
    """A labels file to import holds a row that is not a label of the run."""


@dataclass(frozen=True)
class ImportedLabels:
    """The labels a file gives a run: those to add, and how many it holds already."""

    labels: list[Label]
    already: int


def read_label_rows(
    path: Path, run: RunResult, existing: list[Label], *, now: datetime | None = None
) -> ImportedLabels:
    """Every row of the CSV or JSON-lines file ``path`` as a label of ``run``'s verdicts
    (see the module), checked all before any is returned; ``existing`` are the run's
    labels (identical rows are not added again). Raises :class:`LabelImportError` naming
    the file and line of the first bad row."""
    verdicts = {judged.key: judged for judged in judged_verdicts(run)}
    trials = {(t.trial.case_id, t.trial.trial_index) for t in run.trials}
    cases = {case.case_id for case in run.cases}
    held = {_identity(label) for label in existing}
    when = now or datetime.now(UTC)
    seen: dict[tuple[str, int, str, str], int] = {}
    labels: list[Label] = []
    already = 0
    rows = 0
    for line, row in _rows(path):
        rows += 1

        def refuse(why: str, line: int = line) -> LabelImportError:
            return LabelImportError(f"{path}, line {line}: {why}")

        fields = _fields(row, refuse)
        case, trial, criterion = fields["case"], fields["trial"], fields["criterion"]
        if case not in cases:
            raise refuse(f"case {case!r} is not in the run")
        if (case, trial) not in trials:
            count = sum(1 for c, _ in trials if c == case)
            raise refuse(
                f"case {case!r} has no trial {trial} in the run (its trials are "
                f"0 to {count - 1}, as results.json numbers them)"
            )
        judged = verdicts.get((case, trial, criterion))
        if judged is None:
            raise refuse(
                f"criterion {criterion!r} gave trial {trial} of case {case!r} no pass or "
                f"fail to label ({_criteria_of(verdicts, case, trial)})"
            )
        value = _label_value(fields["label"], judged, refuse)
        label = _label(run, judged, value, fields, when, refuse)
        key = (case, trial, criterion, label.reviewer)
        if key in seen:
            raise refuse(
                f"reviewer {label.reviewer!r} labels trial {trial} of case {case!r} on "
                f"{criterion} again (first on line {seen[key]})"
            )
        seen[key] = line
        if _identity(label) in held:
            already += 1
        else:
            labels.append(label)
    if not rows:
        raise LabelImportError(f"{path}: no labels in it (expected a row per label)")
    return ImportedLabels(labels, already)


def _rows(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """Each row of the file with its line number: JSON lines for ``.jsonl``/``.ndjson``,
    else CSV with a header row."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise LabelImportError(f"{path}: no such labels file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelImportError(f"{path}: cannot read it ({exc})") from None
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LabelImportError(f"{path}, line {number}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise LabelImportError(f"{path}, line {number}: expected a JSON object")
            yield number, row
        return
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [name.strip() for name in reader.fieldnames or []]
    unknown = [name for name in header if _column(name) not in COLUMNS]
    if unknown or not header:
        raise LabelImportError(
            f"{path}, line 1: "
            + (f"unknown column {unknown[0]!r}; " if unknown else "no header row; ")
            + f"expected a header of {', '.join(COLUMNS)} (note, labelled_at optional)"
        )
    for row in reader:
        number = reader.line_num
        if None in row:
            raise LabelImportError(f"{path}, line {number}: more values than columns")
        yield number, {name.strip(): value for name, value in row.items()}


def _column(name: str) -> str:
    return "case" if name == "case_id" else name


def _fields(row: Mapping[str, Any], refuse: Any) -> dict[str, Any]:
    fields = {_column(str(name)): value for name, value in row.items()}
    unknown = [name for name in fields if name not in COLUMNS]
    if unknown:
        raise refuse(f"unknown field {unknown[0]!r} (expected {', '.join(COLUMNS)})")
    for name in _REQUIRED:
        value = fields.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise refuse(f"no {name}")
    trial = fields["trial"]
    if isinstance(trial, str) and trial.strip().isdigit():
        trial = int(trial)
    if not isinstance(trial, int) or isinstance(trial, bool) or trial < 0:
        raise refuse(f"trial must be a whole number from 0, got {fields['trial']!r}")
    fields["trial"] = trial
    for name in ("case", "criterion", "reviewer"):
        fields[name] = str(fields[name]).strip()
    return fields


def _label_value(raw: Any, judged: JudgedVerdict, refuse: Any) -> str | float:
    """``pass``/``fail``, or a score within the criterion's scale."""
    if isinstance(raw, str) and raw.strip().lower() in ("pass", "fail"):
        return raw.strip().lower()
    try:
        score = float(raw) if not isinstance(raw, bool) else None
    except (TypeError, ValueError):
        score = None
    span = judged.result.details.get("score_range")
    low, high = (float(span[0]), float(span[1])) if isinstance(span, list) else (0.0, 1.0)
    if score is None or not low <= score <= high:
        raise refuse(
            f"label must be pass, fail or a score from {low:g} to {high:g} (the scale of "
            f"{judged.result.criterion}), got {raw!r}"
        )
    return score


def _label(
    run: RunResult,
    judged: JudgedVerdict,
    value: str | float,
    fields: dict[str, Any],
    when: datetime,
    refuse: Any,
) -> Label:
    note = fields.get("note")
    at = fields.get("labelled_at")
    try:
        return Label(
            run_id=run.run_id,
            case_id=fields["case"],
            trial=fields["trial"],
            criterion=fields["criterion"],
            content_key=judged.content_key,
            label=value,
            reviewer=fields["reviewer"],
            note="" if note is None else str(note),
            labelled_at=at if at not in (None, "") else when,
        )
    except ValidationError as exc:
        raise refuse(validation_reason(exc)) from None


def _identity(label: Label) -> tuple[Any, ...]:
    where = label.content_key or (label.run_id, label.case_id, label.trial)
    return (where, label.criterion, label.reviewer, label.label, label.note)


def _criteria_of(verdicts: dict[tuple[str, int, str], JudgedVerdict], case: str, trial: int) -> str:
    names = sorted(c for (c_case, c_trial, c) in verdicts if (c_case, c_trial) == (case, trial))
    return "criteria with a verdict on it: " + (", ".join(names) if names else "none")
