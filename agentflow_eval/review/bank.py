"""The label bank: every label kept by the content key of what it judged, in the store
the runs share (the output folder their run folders are in, a publish target), so a
later run, or a re-judge, finds the labels of content judged before: calibration
accumulates night after night, and identical content is never asked twice.

Layout under the store's root: ``label-bank/<first two hex digits>/<content key>.jsonl``,
one label a line. Adding reads an entry, adds the labels it lacks and writes it back
whole (the store's writes are atomic); two reviewers adding to the same content at the
same instant can race, and the loser's label stays in its run folder's ``labels.jsonl``,
from where the next run or publish of that run adds it again.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from agentflow_eval.files.naming import distinct_safe_id
from agentflow_eval.review.labels import Label, labels_from_bytes
from agentflow_eval.storage.base import ObjectStore
from agentflow_eval.storage.keys import join_key
from agentflow_eval.storage.local import LocalStore

__all__ = ["BANK_PREFIX", "LabelBank", "output_root_of"]

BANK_PREFIX = "label-bank"
"""Where a store keeps its label bank."""
_PARALLEL_READS = 16  # an S3 bank is read one object per content key


@dataclass(frozen=True)
class LabelBank:
    """The labels kept in ``store`` under :data:`BANK_PREFIX`."""

    store: ObjectStore

    @classmethod
    def in_folder(cls, root: Path) -> LabelBank:
        """The bank of the runs under the output folder ``root``."""
        return cls(LocalStore(root))

    def describe(self) -> str:
        return f"{self.store.describe()}/{BANK_PREFIX}"

    def _key(self, content_key: str) -> str:
        return join_key(BANK_PREFIX, content_key[:2], f"{content_key}.jsonl")

    def labels_for(self, content_keys: Iterable[str]) -> list[Label]:
        """Every label the bank holds for ``content_keys``."""
        keys = sorted(set(content_keys))
        if not keys:
            return []
        workers = 1 if isinstance(self.store, LocalStore) else _PARALLEL_READS
        with ThreadPoolExecutor(workers) as pool:
            entries = list(pool.map(self._read, keys))
        return [label for entry in entries for label in entry]

    def _read(self, content_key: str) -> list[Label]:
        key = self._key(content_key)
        body = self.store.get(key)
        return [] if body is None else labels_from_bytes(body, self.store.url(key))

    def add(self, labels: Iterable[Label]) -> int:
        """Keep ``labels`` (those with a content key) in the bank; returns how many it did
        not hold before."""
        grouped: dict[str, list[Label]] = {}
        for label in labels:
            if label.content_key is not None:
                grouped.setdefault(label.content_key, []).append(label)
        added = 0
        for content_key, group in grouped.items():
            held = self._read(content_key)
            lines = [label.model_dump_json() for label in held]
            known = set(lines)
            for label in group:
                line = label.model_dump_json()
                if line not in known:
                    known.add(line)
                    lines.append(line)
                    added += 1
            if len(lines) > len(held):
                body = ("\n".join(lines) + "\n").encode("utf-8")
                self.store.put(self._key(content_key), body, "application/x-ndjson", None)
        return added


def output_root_of(run_dir: Path, eval_set_id: str) -> Path | None:
    """The output folder ``run_dir`` was made in (``<root>/<eval set>/<run>``), or None
    when the folder is not laid out so."""
    if run_dir.parent.name == distinct_safe_id(eval_set_id):
        return run_dir.parent.parent
    return None
