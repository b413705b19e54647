"""Live progress for ``agentflow-eval run``, read from the run folder as it grows.

The trials run inside the evaluate flow's run-trials task, in this process; every
finished trial is appended to the run folder's ``trials.jsonl`` and every judged one to
``judged.jsonl`` (flushed line by line, so a crash loses nothing). :class:`RunFolderWatch`
follows those two files from a thread of the CLI — nothing is threaded through the flow,
its parameters or its tasks, so the Prefect record is the same with or without a
display. The CLI plans the run before it starts the flow, so the watch is given the run
folder and the number of trials from the plan.

Two displays: :class:`LiveDisplay` (rich progress bars on a terminal: counts, passed
and failed so far, rate, time left; honours ``NO_COLOR``) and :class:`PlainDisplay`
(a line every tenth of the way, for logs and pipes).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from agentflow_eval.files.limits import parse_json

if TYPE_CHECKING:
    from rich.progress import TaskID

__all__ = [
    "LiveDisplay",
    "PlainDisplay",
    "ProgressDisplay",
    "RunFolderWatch",
    "RunProgress",
    "StageFile",
    "follow_run",
]

POLL_S = 0.25
"""How often the watch reads the run folder."""


@dataclass
class StageFile:
    """One growing JSON-lines file, read incrementally: only complete lines count (a
    line being written is read on the next poll)."""

    path: Path
    offset: int = 0
    _partial: bytes = b""

    def new_records(self) -> list[dict[str, Any]]:
        """The records appended since the last call."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                chunk = handle.read()
        except FileNotFoundError:
            return []
        self.offset += len(chunk)
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        records = []
        for line in lines:
            if line.strip():
                try:
                    records.append(parse_json(line, self.path))
                except ValueError:  # a torn line a crashed process left; resume cuts it
                    continue  # (or one past the limits, which the run's stage refuses)
        return records


@dataclass
class RunProgress:
    """What the run folder says so far."""

    run_dir: Path
    total: int = 0
    """Trials the run will have when done (cases × runs per case)."""
    trials_done: int = 0
    trials_errored: int = 0
    already_done: int = 0
    """Trials the folder held when the watch first read it (a resumed run)."""
    judged: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    not_evaluated: int = 0
    already_judged: int = 0

    @property
    def judging(self) -> bool:
        return self.judged > self.already_judged or (
            self.total > 0 and self.trials_done >= self.total
        )


class RunFolderWatch:
    """Follows the run folder a CLI run is writing (see the module docstring): the folder
    and the number of trials the run will have come from its plan. What the folder holds
    when the watch is made (a resumed run's earlier trials) counts as done already."""

    def __init__(self, run_dir: Path, total: int, also: Sequence[Path] = ()) -> None:
        self.progress = RunProgress(run_dir=run_dir, total=total)
        folders = [run_dir, *also]  # a paired run's baseline side writes a folder of its own
        self._trials = [StageFile(folder / "trials.jsonl") for folder in folders]
        self._judged = [StageFile(folder / "judged.jsonl") for folder in folders]
        held = self.poll()
        held.already_done, held.already_judged = held.trials_done, held.judged

    @property
    def run_dir(self) -> Path:
        return self.progress.run_dir

    def poll(self) -> RunProgress:
        """Read what was appended since the last poll."""
        progress = self.progress
        for trial in (t for stage in self._trials for t in stage.new_records()):
            progress.trials_done += 1
            progress.trials_errored += trial.get("error") is not None
        for result in (r for stage in self._judged for r in stage.new_records()):
            progress.judged += 1
            status = result.get("status")
            if status == "passed":
                progress.passed += 1
            elif status == "failed":
                progress.failed += 1
            elif status == "errored":
                progress.errored += 1
            else:
                progress.not_evaluated += 1
        return progress


# ------------------------------------------------------------------------------ displays


class ProgressDisplay(Protocol):
    def update(self, progress: RunProgress) -> None: ...

    def close(self, progress: RunProgress) -> None: ...


@dataclass
class _StageRate:
    """A stage's pace: items per second since the stage was first seen (the items
    already done then left out), frozen once the stage is complete."""

    started: float | None = None
    before: int = 0
    final: tuple[float, float | None] | None = None

    def measure(self, done: int, total: int, before: int) -> tuple[float, float | None]:
        """(items per second, seconds left or None while unknown)."""
        if self.final is not None:
            return self.final
        now = time.monotonic()
        if self.started is None:
            self.started, self.before = now, before
        elapsed = now - self.started
        new = done - self.before
        rate = new / elapsed if elapsed > 0 and new > 0 else 0.0
        left = (total - done) / rate if rate else None
        if done >= total:
            self.final = (rate, 0.0)
        return rate, left


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def _verdicts(progress: RunProgress) -> str:
    parts = [f"{progress.passed} passed", f"{progress.failed} failed"]
    if progress.errored:
        parts.append(f"{progress.errored} errored")
    if progress.not_evaluated:
        parts.append(f"{progress.not_evaluated} not evaluated")
    return " · ".join(parts)


class PlainDisplay:
    """A line each tenth of the way through each stage (the last at its end), and at
    least every ``every_s`` seconds while it moves, for output that is not a terminal:
    ``trials 40/100 · 2 errored · 12.5/s · 5s left``."""

    STEPS = 10

    def __init__(self, stream: IO[str], *, every_s: float = 30.0) -> None:
        self._stream = stream
        self._every_s = every_s
        self._printed = {"trials": 0, "judged": 0}
        self._last = {"trials": (0, time.monotonic()), "judged": (0, time.monotonic())}
        self._rates = {"trials": _StageRate(), "judged": _StageRate()}

    def update(self, progress: RunProgress) -> None:
        if not progress.total:
            return
        self._line(
            "trials",
            progress.trials_done,
            progress,
            f"{progress.trials_errored} errored",
            progress.already_done,
        )
        if progress.judging:
            self._line(
                "judged", progress.judged, progress, _verdicts(progress), progress.already_judged
            )

    def _line(self, stage: str, done: int, progress: RunProgress, detail: str, before: int) -> None:
        rate, left = self._rates[stage].measure(done, progress.total, before)
        step = done * self.STEPS // progress.total
        last_done, last_time = self._last[stage]
        moved = done > max(last_done, before)
        overdue = time.monotonic() - last_time >= self._every_s
        if not moved or (step <= self._printed[stage] and not overdue):
            return
        self._printed[stage] = max(step, self._printed[stage])
        self._last[stage] = (done, time.monotonic())
        line = f"{stage} {done}/{progress.total} · {detail}"
        if done < progress.total and rate:
            line += f" · {rate:.1f}/s · {_duration(left)} left"
        print(line, file=self._stream, flush=True)

    def close(self, progress: RunProgress) -> None:
        self.update(progress)


class LiveDisplay:
    """Rich progress bars on a terminal, one for the trials and one for judging: done
    of total, errored so far (trials), passed and failed so far (judging), the rate and
    the time left. Colour follows rich's rules (``NO_COLOR`` turns it off)."""

    def __init__(self, stream: IO[str], *, force_terminal: bool | None = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._console = Console(file=stream, force_terminal=force_terminal)
        self._progress = Progress(
            TextColumn("{task.description:<7}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[eta]}"),
            TimeElapsedColumn(),
            console=self._console,
            transient=False,
        )
        self._trials: TaskID | None = None
        self._judged: TaskID | None = None
        self._rates: dict[int, _StageRate] = {}

    def update(self, progress: RunProgress) -> None:
        if not progress.total:
            return
        if self._trials is None:  # the bars appear once the run has a folder and a size
            self._progress.start()
            self._trials = self._progress.add_task(
                "trials", total=progress.total, detail="", rate="", eta=""
            )
        self._show(
            self._trials,
            progress.trials_done,
            progress,
            f"{progress.trials_errored} errored",
            progress.already_done,
        )
        if progress.judging:
            if self._judged is None:
                self._judged = self._progress.add_task(
                    "judging", total=progress.total, detail="", rate="", eta=""
                )
            self._show(
                self._judged,
                progress.judged,
                progress,
                _verdicts(progress),
                progress.already_judged,
            )

    def _show(
        self, task: TaskID, done: int, progress: RunProgress, detail: str, before: int
    ) -> None:
        rate, left = self._rates.setdefault(task, _StageRate()).measure(
            done, progress.total, before
        )
        self._progress.update(
            task,
            completed=done,
            detail=detail,
            rate=f"{rate:.1f}/s" if rate else "",
            eta="" if done >= progress.total or left is None else f"ETA {_duration(left)}",
        )

    def close(self, progress: RunProgress) -> None:
        self.update(progress)
        if self._trials is not None:
            self._progress.stop()


class follow_run:
    """Poll ``watch`` from a daemon thread and show it on ``display`` until the block
    ends; the last poll happens after the block, so the display ends on the final
    counts.

    ::

        with follow_run(watch, display):
            outcome = run_the_flow()
    """

    def __init__(
        self,
        watch: RunFolderWatch,
        display: ProgressDisplay,
        *,
        interval_s: float = POLL_S,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.watch = watch
        self._display = display
        self._interval = interval_s
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="agentflow-progress", daemon=True)
        self._on_error = on_error

    def __enter__(self) -> follow_run:
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                with self._lock:
                    self._display.update(self.watch.poll())
            except Exception as exc:  # a display problem must never stop the run
                if self._on_error is not None:
                    self._on_error(exc)
                return

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        with self._lock:
            self._display.close(self.watch.poll())
