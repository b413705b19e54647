"""A paired run's measuring: the first round of pairs, then, with ``until_decided``, waves
of pairs for the cases not yet decided, until each is decided or capped or the budget is
spent (:mod:`agentflow_eval.compare.sequential`).

After each round both sides are judged, and the pairs' evidence is brought up to date.
What decides the next wave is the evidence alone, and every wave is written to the run
folder's ``waves.jsonl`` before it runs: an interrupted run, resumed, runs the missing
trials of the waves on record, replays the evidence in the same order and goes on with
the same waves an uninterrupted run would have run. Nothing is kept in memory that the
run folder does not hold.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from agentflow_eval.compare.sequential import Ledger
from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.files.limits import parse_json
from agentflow_eval.models.results import TrialResult
from agentflow_eval.pipeline.stages import PairedOptions
from agentflow_eval.run.pass_value import pass_value
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.resumable import TrialKey

__all__ = [
    "WAVES_FILE",
    "PassValues",
    "first_round",
    "next_keys",
    "options_or_fail",
    "read_waves",
    "record_wave",
    "replay",
]

WAVES_FILE = "waves.jsonl"


def first_round(plan: RunPlan) -> list[TrialKey]:
    """The first round's pairs: every case, trials ``0 .. runs - 1``."""
    return [
        (case.eval_id, index) for case in plan.eval_set.eval_cases for index in range(plan.runs)
    ]


def read_waves(run_dir: Path) -> list[list[TrialKey]]:
    """The waves on record in ``run_dir``, in order (a line cut short by a crash, the
    last, is a wave that never started)."""
    path = run_dir / WAVES_FILE
    if not path.is_file():
        return []
    waves: list[list[TrialKey]] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        try:
            document = parse_json(line, path)
            waves.append([(str(case), int(index)) for case, index in document["pairs"]])
        except (ValueError, KeyError, TypeError):
            if number == len(lines):
                break
            raise EvalFileError(path, f"line {number} is not a wave of pairs") from None
    return waves


def record_wave(run_dir: Path, waves: list[list[TrialKey]]) -> None:
    """Write every wave so far, the newest last (atomically: a wave is on record whole
    or not at all)."""
    lines = [
        json.dumps({"wave": number, "pairs": [list(key) for key in wave]}) + "\n"
        for number, wave in enumerate(waves, start=1)
    ]
    write_text_atomically(run_dir / WAVES_FILE, lines)


@dataclass
class PassValues:
    """How firmly each judged trial of a run passed, read from its judged file as it
    grows (only what was appended since the last read is parsed)."""

    path: Path
    values: dict[TrialKey, float | None]
    _offset: int = 0

    @classmethod
    def of(cls, path: Path) -> PassValues:
        return cls(path, {})

    def update(self) -> None:
        if not self.path.is_file():
            return
        with self.path.open("rb") as handle:
            handle.seek(self._offset)
            for line in _whole_lines(handle.read()):
                self._offset += len(line)
                try:
                    result = TrialResult.model_validate_json(line)
                except ValidationError:
                    continue  # the judge stage repairs its file; a torn line is no verdict
                key = (result.trial.case_id, result.trial.trial_index)
                self.values[key] = pass_value(result)


def _whole_lines(data: bytes) -> Iterator[bytes]:
    start = 0
    while (end := data.find(b"\n", start)) >= 0:
        yield data[start : end + 1]
        start = end + 1


def replay(
    ledger: Ledger,
    rounds: list[list[TrialKey]],
    candidate: PassValues,
    baseline: PassValues,
) -> None:
    """Bring ``ledger`` to where ``rounds`` of pairs leave it: each pair's two passes
    recorded in order (a pair where a side has no verdict on its agent costs its trials
    and adds no evidence), the cases a round touched settled after it."""
    candidate.update()
    baseline.update()
    for keys in rounds:
        for key in keys:
            c, b = candidate.values.get(key), baseline.values.get(key)
            if c is None or b is None:
                ledger.spent += 2
            else:
                ledger.record(key[0], b, c)
        ledger.settle(dict.fromkeys(case for case, _ in keys))


def next_keys(ledger: Ledger, taken: dict[str, int]) -> list[TrialKey]:
    """The next wave's pairs: the cases :meth:`Ledger.next_wave` chooses, each given its
    next trial index (``taken``: the next free index per case, advanced)."""
    keys = []
    for case in ledger.next_wave():
        keys.append((case, taken[case]))
        taken[case] += 1
    return keys


def options_or_fail(options: PairedOptions | None) -> PairedOptions:
    if options is None:
        raise ValueError("a paired run needs its paired options")
    return options
