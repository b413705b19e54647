"""Trials found again by case, so reports can be written one case at a time.

The report stage must not hold every trial of a large run: 10,000 judged trials take
hundreds of MB as objects. :class:`JudgedFileTrials` keeps only where each trial's line
starts in ``judged.jsonl`` (recorded during the one aggregation pass) and reads a case's
trials back when that case is written. :class:`TrialsInMemory` serves a
:class:`~agentflow_eval.models.results.RunResult` that already holds its trials (``AgentEvaluator``,
a report re-rendered from ``results.json``), so both go through the same writers.

Either way a case's trials come back sorted by trial index, as the reports show them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

from agentflow_eval.files.jsonl import (
    iter_lines_with_offsets,
    parse_record,
    read_line_at,
    validate_record,
)
from agentflow_eval.models.results import CaseResult, TrialResult

__all__ = [
    "CaseTrials",
    "CaseWithTrials",
    "JudgedFileTrials",
    "TrialsInMemory",
    "each_case",
]

CaseWithTrials = tuple[CaseResult, list[TrialResult]]
"""A case's summary with its trials, sorted by trial index."""


class CaseTrials(Protocol):
    """Where a report gets the trials of one case."""

    def trials_of(self, case_id: str) -> list[TrialResult]:
        """The case's trials sorted by trial index (empty for a case with none)."""
        ...


def each_case(cases: Iterable[CaseResult], trials: CaseTrials) -> Iterator[CaseWithTrials]:
    """Each case with its trials, read when the case is reached: a consumer that drops a
    case before asking for the next one holds one case's trials at a time."""
    for case in cases:
        yield case, trials.trials_of(case.case_id)


class TrialsInMemory:
    """The trials of a run already in memory, grouped by case."""

    def __init__(self, trials: Iterable[TrialResult]) -> None:
        by_case: dict[str, list[TrialResult]] = defaultdict(list)
        for result in trials:
            by_case[result.trial.case_id].append(result)
        for results in by_case.values():
            results.sort(key=lambda r: r.trial.trial_index)
        self._by_case = dict(by_case)

    def trials_of(self, case_id: str) -> list[TrialResult]:
        return list(self._by_case.get(case_id, []))


class JudgedFileTrials:
    """The trials of a ``judged.jsonl`` found by case through the byte offsets of their
    lines; only the offsets stay in memory (a few dozen bytes per trial).

    Which lines count (known cases, one line per trial) is the caller's decision: it
    :meth:`add`-s exactly the lines it aggregated.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offsets: dict[str, list[tuple[int, int]]] = {}
        self._count = 0

    def add(self, case_id: str, trial_index: int, offset: int) -> None:
        """Record that the line at ``offset`` holds trial ``trial_index`` of ``case_id``."""
        self._offsets.setdefault(case_id, []).append((trial_index, offset))
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def trials_of(self, case_id: str) -> list[TrialResult]:
        places = sorted(self._offsets.get(case_id, []))
        if not places:
            return []
        results = []
        with self.path.open("rb") as handle:
            for trial_index, offset in places:
                line = read_line_at(handle, offset)
                result = validate_record(line, TrialResult, self.path, f"byte {offset}")
                if result.trial.key != (case_id, trial_index):
                    raise ValueError(
                        f"{self.path}: expected trial {trial_index} of case {case_id!r} at byte "
                        f"{offset}, found trial {result.trial.trial_index} of case "
                        f"{result.trial.case_id!r} (was the file changed during the report?)"
                    )
                results.append(result)
        return results

    @classmethod
    def scan(cls, path: Path) -> JudgedFileTrials:
        """The index of an existing ``judged.jsonl``, the first line of each (case,
        trial) counting, as the report stage counts them. Lines are read as plain JSON
        for their keys only, so scanning 10,000 trials stays cheap."""
        index = cls(path)
        seen: set[tuple[str, int]] = set()
        for offset, line in iter_lines_with_offsets(path):
            trial = parse_record(line, path, f"byte {offset}")["trial"]
            key = (str(trial["case_id"]), int(trial["trial_index"]))
            if key not in seen:
                seen.add(key)
                index.add(key[0], key[1], offset)
        return index

    def lines_in_key_order(self) -> Iterator[bytes]:
        """Every recorded line as stored (compact JSON), ordered by case id, then trial
        index: the order of ``RunResult.trials``. Lines are not parsed."""
        with self.path.open("rb") as handle:
            for case_id in sorted(self._offsets):
                for _, offset in sorted(self._offsets[case_id]):
                    yield read_line_at(handle, offset)
