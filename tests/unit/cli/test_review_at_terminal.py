"""``agentflow-eval review RUN_DIR`` without ``--labels``: a person's keys label the run's
sample (here fed through a pipe, a line per key; tests/e2e/test_review_terminal.py
presses them at a real terminal), and a sample flag out of range is refused in one line
with nothing written."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentflow_eval.review.labels import LABELS_FILE, read_labels
from tests.support.cli_in_process import CliResult
from tests.support.judged_runs import planted_run
from tests.support.sample_results import write_run_dir


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    planted = planted_run(cases=10, trials=2, wrong_share=0.2, seed=4)
    return write_run_dir(tmp_path / "out" / "planted" / "20261120T023000Z-planted1", planted.run)


def test_keys_label_the_sample_and_quit_keeps_what_was_given(
    cli: Callable[..., CliResult], run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a note, a fail, a key that is no answer, a pass, then quit
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\nwrong city\nf\nz\np\nq\n"))
    result = cli("review", str(run_dir), "--size", "4", "--reviewer", "ann")
    assert result.returncode == 0, result.stderr
    assert "4 trials to review" in result.stdout
    assert "'z' is not an answer here" in result.stdout
    assert "stopped: 2 of 4 labelled" in result.stdout
    assert f"to go on: agentflow-eval review {run_dir}" in result.stdout.replace("\n", "")
    first, second = read_labels(run_dir)
    assert (first.label, first.note, second.label, second.note) == (
        "fail",
        "wrong city",
        "pass",
        "",
    )
    assert {first.reviewer, second.reviewer} == {"ann"}
    results = json.loads((run_dir / "results.json").read_text())
    assert results["judge_agreement"][0]["labels"] == 2

    monkeypatch.setattr(sys, "stdin", io.StringIO("s\np\n"))
    again = cli("review", str(run_dir), "--size", "4", "--reviewer", "ann")
    assert "2 of 4 labelled, resuming" in again.stdout
    assert "3 of 4 ·" in again.stdout and "1 of 4 ·" not in again.stdout
    assert "skipped" in again.stdout and len(read_labels(run_dir)) == 3


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--size", "-1"), "error: --size: must be at least 1, got -1"),
        (("--width", "1.5"), "error: --width: must be an interval's width between 0 and 1"),
        (("--criteria", "nope"), "criterion 'nope' gave run planted1 no pass or fail"),
    ],
)
def test_a_sample_out_of_range_is_refused_in_one_line(
    cli: Callable[..., CliResult], run_dir: Path, flags: tuple[str, ...], said: str
) -> None:
    before = sorted(p.name for p in run_dir.iterdir())
    result = cli("review", str(run_dir), *flags)
    assert result.returncode == 2
    assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in run_dir.iterdir()) == before
    assert not (run_dir / LABELS_FILE).exists()
