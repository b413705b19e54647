"""What the trial and judge stages share: a bounded pool of coroutines over work read
lazily, the (case, trial) keys a stage's output file already holds (so a resumed stage
does only what is missing), and the counts a stage reports."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from agentflow_eval.files.jsonl import iter_records
from agentflow_eval.files.limits import UnreadableFile

__all__ = ["StageCounts", "TrialKey", "completed_keys", "run_pool"]

TrialKey = tuple[str, int]
T = TypeVar("T")


@dataclass
class StageCounts:
    """What a stage did: how many records it wrote and how many it found already done,
    and how long it took (wall seconds)."""

    written: int = 0
    skipped: int = 0
    errored: int = 0
    elapsed_s: float = 0.0


class _Key(BaseModel):
    case_id: str
    trial_index: int


class _Line(BaseModel):
    """A line of a trials file (the key at its top) or of a judged file (under
    ``trial``): only the key is read, the rest of the line skipped."""

    case_id: str | None = None
    trial_index: int | None = None
    trial: _Key | None = None

    def key(self, path: Path) -> TrialKey:
        if self.trial is not None:
            return self.trial.case_id, self.trial.trial_index
        if self.case_id is None or self.trial_index is None:
            raise UnreadableFile(path, "a line without a trial's case_id and trial_index")
        return self.case_id, self.trial_index


def completed_keys(path: Path) -> set[TrialKey]:
    """The (case, trial) keys already written to a trials or judged file (read as every
    line is, within the limits: :func:`~agentflow_eval.files.jsonl.iter_records`)."""
    return {line.key(path) for line in iter_records(path, _Line)}


async def run_pool(
    items: Iterable[T], work: Callable[[T], Awaitable[None]], concurrency: int
) -> None:
    """Run ``work`` over ``items`` with at most ``concurrency`` in flight. Memory stays
    O(concurrency) however many items there are: workers pull from one shared iterator."""
    iterator = iter(items)

    async def worker() -> None:
        for item in iterator:  # single event loop: next() never races
            await work(item)

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(concurrency):
                group.create_task(worker())
    except BaseExceptionGroup as failed:
        # the workers that met the same failure (a full disk, refused credentials) raise it
        # once, as itself; different failures stay grouped
        kinds = {type(exc) for exc in failed.exceptions}
        if len(kinds) == 1:
            raise failed.exceptions[0] from None
        raise
