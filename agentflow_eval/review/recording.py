"""Where labels go and where a run finds them: a label given is kept beside its run
(``labels.jsonl``) and in the label bank; a run's agreement is measured on its folder's
labels, its source run's (a re-judge) and the bank's for the content it judged, and the
folder is brought up to date with them, so it holds (and publishes) every label its
figures rest on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentflow_eval.errors import StoreError
from agentflow_eval.review.bank import LabelBank
from agentflow_eval.review.labels import Label, LabelsFileError, append_labels, read_labels
from agentflow_eval.review.verdicts import VerdictLedger

__all__ = ["GatheredLabels", "gather_labels", "record_labels"]


def record_labels(run_dir: Path, labels: Sequence[Label], bank: LabelBank | None) -> None:
    """Keep ``labels`` in ``run_dir``'s labels file, then in ``bank`` (a bank that fails
    raises :class:`~agentflow_eval.errors.StoreError` with the labels already kept in
    the folder, from where the run's next aggregation adds them to the bank)."""
    append_labels(run_dir, labels)
    if bank is not None:
        bank.add(labels)


@dataclass
class GatheredLabels:
    """The labels for a run's verdicts, and what could not be read."""

    labels: list[Label] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def gather_labels(
    run_dir: Path,
    verdicts: VerdictLedger,
    *,
    bank: LabelBank | None,
    sources: Sequence[Path] = (),
) -> GatheredLabels:
    """The labels of ``run_dir``, of ``sources`` (the run a re-judged run re-judged) and,
    for the content ``verdicts`` judged, of ``bank``. The ones the folder lacks are
    appended to its labels file, and the folder's own that the bank lacks are added to
    it. A labels file or bank that cannot be read is a note, not a failure: the run's
    results stand without its agreement."""
    gathered = GatheredLabels()
    keys = verdicts.content_keys()
    try:
        own = read_labels(run_dir)
    except LabelsFileError as exc:
        gathered.notes.append(f"judge agreement not measured: {exc}")
        return gathered
    elsewhere: list[Label] = []
    for source in sources:
        try:
            elsewhere += [
                label
                for label in read_labels(source)
                if label.content_key is None or label.content_key in keys
            ]
        except LabelsFileError as exc:
            gathered.notes.append(f"labels of the source run left out: {exc}")
    banked: list[Label] = []
    if bank is not None:
        try:
            banked = bank.labels_for(keys)
        except (StoreError, LabelsFileError) as exc:
            gathered.notes.append(f"the label bank {bank.describe()} was not read: {exc}")
    known = {label.model_dump_json() for label in own}
    new: list[Label] = []
    for label in [*elsewhere, *banked]:
        line = label.model_dump_json()
        if line not in known:
            known.add(line)
            new.append(label)
    append_labels(run_dir, new)
    if bank is not None:
        in_bank = {label.model_dump_json() for label in banked}
        missing = [label for label in own if label.model_dump_json() not in in_bank]
        try:
            bank.add(missing)
        except StoreError as exc:
            gathered.notes.append(f"labels not added to the label bank {bank.describe()}: {exc}")
    gathered.labels = [*own, *new]
    return gathered
