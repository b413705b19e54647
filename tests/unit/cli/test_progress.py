"""The run's progress, read from its folder as the flow writes it: the watch finds the
new run folder, counts finished and judged trials as their lines land (a line being
written counts once it is whole), and the displays show counts, verdicts so far, the
rate and the time left — bars on a terminal (colour unless NO_COLOR), plain lines
otherwise."""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentflow_eval.cli.progress import LiveDisplay, PlainDisplay, RunFolderWatch, follow_run
from agentflow_eval.models.results import Trial, TrialError, TrialResult

START = datetime(2026, 11, 20, tzinfo=UTC)
COLOUR = re.compile(r"\x1b\[[0-9;]*3[0-9;]*m")  # an SGR sequence setting a colour
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def plain(text: str) -> str:
    return ESCAPES.sub("", text)


def _trial(index: int, *, errored: bool = False) -> Trial:
    error = TrialError(kind="exception", message="boom") if errored else None
    return Trial(case_id=f"c{index % 2}", trial_index=index // 2, started_at=START, error=error)


class Folder:
    """A run folder the way the flow writes it, line by line."""

    def __init__(self, eval_folder: Path, name: str, runs: int = 2) -> None:
        self.path = eval_folder / name
        self.path.mkdir(parents=True)
        (self.path / "run.json").write_text(json.dumps({"run_id": name, "runs_per_case": runs}))

    def append(self, file: str, line: str) -> None:
        with (self.path / file).open("a", encoding="utf-8") as handle:
            handle.write(line)

    def trial(self, index: int, *, errored: bool = False) -> None:
        self.append("trials.jsonl", _trial(index, errored=errored).model_dump_json() + "\n")

    def judged(self, index: int, status: str) -> None:
        result = TrialResult(trial=_trial(index, errored=status == "errored"), status=status)
        self.append("judged.jsonl", result.model_dump_json() + "\n")


def test_the_watch_counts_the_planned_folder_as_lines_land(tmp_path: Path) -> None:
    eval_folder = tmp_path / "out" / "support"
    earlier = Folder(eval_folder, "20261119T000000Z-old")
    earlier.trial(0)
    run = Folder(eval_folder, "20261120T000000Z-new", runs=2)
    watch = RunFolderWatch(run.path, total=4)
    progress = watch.poll()
    assert (progress.run_dir, progress.total, progress.trials_done) == (run.path, 4, 0)
    run.trial(0)
    run.trial(1, errored=True)
    line = _trial(2).model_dump_json() + "\n"
    run.append("trials.jsonl", line[:20])  # being written
    progress = watch.poll()
    assert (progress.trials_done, progress.trials_errored) == (2, 1)
    run.append("trials.jsonl", line[20:])
    run.trial(3)
    assert watch.poll().trials_done == 4
    assert watch.poll().judging
    for index, status in enumerate(["passed", "errored", "failed", "not_evaluated"]):
        run.judged(index, status)
    progress = watch.poll()
    assert (progress.judged, progress.passed, progress.failed) == (4, 1, 1)
    assert (progress.errored, progress.not_evaluated) == (1, 1)


def test_a_resumed_run_counts_what_its_folder_held_as_done_already(tmp_path: Path) -> None:
    run = Folder(tmp_path / "support", "20261120T000000Z-r", runs=3)
    run.trial(0)
    run.trial(1)
    watch = RunFolderWatch(run.path, total=6)
    progress = watch.poll()
    assert (progress.total, progress.trials_done, progress.already_done) == (6, 2, 2)
    run.trial(2)
    assert (watch.poll().trials_done, watch.poll().already_done) == (3, 2)


def test_plain_lines_each_tenth_of_the_way_with_rate_and_time_left(tmp_path: Path) -> None:
    run = Folder(tmp_path / "support", "20261120T000000Z-p", runs=10)
    watch = RunFolderWatch(run.path, total=20)
    stream = io.StringIO()
    display = PlainDisplay(stream)
    display.update(watch.poll())
    for index in range(20):
        run.trial(index, errored=index == 3)
        display.update(watch.poll())
    for index in range(20):
        run.judged(index, "passed" if index % 4 else "failed")
        display.update(watch.poll())
    display.close(watch.poll())
    lines = stream.getvalue().splitlines()
    trials = [line for line in lines if line.startswith("trials ")]
    judged = [line for line in lines if line.startswith("judged ")]
    assert len(trials) == len(judged) == 10  # one per tenth, not one per trial
    assert re.fullmatch(r"trials 2/20 · 0 errored · [\d.]+/s · \d+s left", trials[0])
    assert [int(line.split()[1].split("/")[0]) for line in judged] == list(range(2, 21, 2))
    assert trials[-1] == "trials 20/20 · 1 errored"
    assert judged[-1] == "judged 20/20 · 15 passed · 5 failed"
    assert "\x1b" not in stream.getvalue()


def test_plain_lines_come_at_least_every_so_often_while_the_stage_moves(tmp_path: Path) -> None:
    run = Folder(tmp_path / "support", "20261120T000000Z-s", runs=100)
    watch = RunFolderWatch(run.path, total=100)
    stream = io.StringIO()
    display = PlainDisplay(stream, every_s=0.0)
    for index in range(3):
        run.trial(index)
        display.update(watch.poll())
        display.update(watch.poll())  # nothing new: no line
    assert stream.getvalue().splitlines() == [
        line for line in stream.getvalue().splitlines() if line.startswith("trials ")
    ]
    assert [line.split(" · ")[0] for line in stream.getvalue().splitlines()] == [
        "trials 1/100",
        "trials 2/100",
        "trials 3/100",
    ]


@pytest.mark.parametrize("no_color", [False, True])
def test_live_bars_show_counts_verdicts_and_colour_unless_no_color(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_color: bool
) -> None:
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    run = Folder(tmp_path / "support", "20261120T000000Z-l", runs=2)
    watch = RunFolderWatch(run.path, total=4)
    stream = io.StringIO()
    with follow_run(watch, LiveDisplay(stream, force_terminal=True), interval_s=0.01):
        for index in range(4):
            run.trial(index)
        for index in range(4):
            run.judged(index, "passed" if index else "failed")
    out = stream.getvalue()
    assert re.search(r"trials +━+ 4/4 0 errored", plain(out))
    assert re.search(r"judging +━+ 4/4 3 passed · 1 failed", plain(out))
    assert bool(COLOUR.search(out)) is not no_color


def test_a_display_that_fails_never_stops_the_run(tmp_path: Path) -> None:
    class Broken:
        def update(self, progress: object) -> None:
            raise RuntimeError("terminal gone")

        def close(self, progress: object) -> None:
            pass

    errors: list[BaseException] = []
    broken = Folder(tmp_path / "support", "20261120T000000Z-b")
    watch = RunFolderWatch(broken.path, total=5)
    with follow_run(watch, Broken(), interval_s=0.01, on_error=errors.append):
        for _ in range(50):
            if errors:
                break
            __import__("time").sleep(0.01)
    assert [str(e) for e in errors] == ["terminal gone"]
