"""``agentflow-eval review RUN_DIR`` at a real terminal (tmux): a person reads each sampled
trial on screen, answers with single keys (a verdict, or a score on the 1-to-5 scale of
ADK's coherence judge; a note first), quits midway, and a second session resumes with
the trials left, saying so. Each label is in the run's labels.jsonl as it is given, and
the judges are measured against them when a session ends."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from agentflow_eval.review.labels import read_labels
from tests.support.review_runs import judged_run_folder
from tests.support.tmux import Tmux

pytestmark = pytest.mark.e2e

COMMAND = str(Path(sys.executable).parent / "agentflow-eval")


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "USER": "someone",
    }


def _answer(term: Tmux, position: int, total: int, *, note: str | None = None) -> str:
    """Answer the trial shown at ``position``: the judge's own verdict (its score on a
    scale: 5 for a pass, 2 for a fail); the key pressed."""
    screen = term.wait_for("q quit", after=f"{position} of {total} ·")
    shown = screen.rpartition(f"{position} of {total} ·")[2]
    judge_passed = "verdict      pass" in shown
    on_scale = "1–5 your score" in shown
    key = ("5" if judge_passed else "2") if on_scale else ("p" if judge_passed else "f")
    if note is not None:
        term.keys("n")
        term.wait_for("note (Enter to end):", after=f"{position} of {total} ·")
        term.keys(note)
        term.enter()
    term.keys(key)
    term.wait_for("labelled", after=f"{position} of {total} ·")
    return key


def test_a_person_labels_a_run_at_the_terminal_quits_and_resumes(tmp_path: Path) -> None:
    run_dir = judged_run_folder(tmp_path / "judged", cases=3, scale=True)
    command = [COMMAND, "review", str(run_dir), "--size", "2", "--reviewer", "ann"]

    with Tmux(command, folder=tmp_path / "t1", env=_env(tmp_path), cwd=tmp_path) as term:
        screen = term.wait_for("4 trials to review")
        screen = term.wait_for("q quit", after="1 of 4 ·")
        first = screen.rpartition("1 of 4 ·")[2]
        # the trial as the Prefect UI's form shows it
        for needle in ("conversation", "get_weather", "answer", "reference", "the judge"):
            assert needle in first, (needle, first)
        term.keys("x")  # not an answer: asked again, nothing labelled
        term.wait_for("'x' is not an answer here")
        _answer(term, 1, 4, note="checked the tool call")
        _answer(term, 2, 4)
        term.wait_for("q quit", after="3 of 4 ·")
        term.keys("q")
        assert term.wait_exit() == 0
        screen = term.screen()
    assert "stopped: 2 of 4 labelled" in screen
    assert f"to go on: agentflow-eval review {run_dir}" in screen.replace("\n", "")
    labels = read_labels(run_dir)
    assert len(labels) == 2 and {label.reviewer for label in labels} == {"ann"}
    assert labels[0].note == "checked the tool call" and labels[1].note == ""

    with Tmux(command, folder=tmp_path / "t2", env=_env(tmp_path), cwd=tmp_path) as term:
        term.wait_for("2 of 4 labelled, resuming")
        screen = term.wait_for("q quit", after="resuming")
        assert "1 of 4 ·" not in screen.rpartition("resuming")[2]  # only the trials left
        _answer(term, 3, 4)
        _answer(term, 4, 4)
        term.wait_for("done: 4 of 4 labelled")
        assert term.wait_exit() == 0
        screen = term.screen().replace("\n", "")
    labels = read_labels(run_dir)
    keys = {(label.case_id, label.trial, label.criterion) for label in labels}
    assert len(labels) == len(keys) == 4
    # the judges measured against the labels, on screen and in the run's results
    assert "against people" in screen
    results = json.loads((run_dir / "results.json").read_text())
    assert {entry["criterion"] for entry in results["judge_agreement"]} == {
        label.criterion for label in labels
    }
