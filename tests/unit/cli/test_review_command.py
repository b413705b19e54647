"""``agentflow-eval review RUN_DIR --labels FILE``: labels made elsewhere imported whole
or not at all, the run's judges measured against them."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.review.bank import LabelBank
from agentflow_eval.review.labels import LABELS_FILE, read_labels
from tests.support.cli_in_process import CliResult
from tests.support.judged_runs import CRITERION, PlantedRun, planted_run
from tests.support.sample_results import write_run_dir


@pytest.fixture
def planted() -> PlantedRun:
    return planted_run(cases=250, trials=4, true_pass_rate=0.7, wrong_share=0.2, seed=9)


@pytest.fixture
def run_dir(planted: PlantedRun, tmp_path: Path) -> Path:
    """The run's folder where a run makes it: ``<output>/<eval set>/<start>-<run id>``."""
    return write_run_dir(tmp_path / "out" / "planted" / "20261120T023000Z-planted1", planted.run)


def rows(planted: PlantedRun) -> list[dict[str, object]]:
    """A label per verdict of the run (1,000), as a person would give them."""
    return [
        {
            "case": case,
            "trial": trial,
            "criterion": CRITERION,
            "label": "pass" if deserved else "fail",
            "reviewer": "ana",
            "note": "checked against the atlas" if trial == 0 else "",
        }
        for (case, trial), deserved in sorted(planted.truth.items())
    ]


def write_csv(path: Path, table: list[dict[str, object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    return path


def test_a_thousand_rows_import_and_measure_the_judge(
    cli: Callable[..., CliResult], planted: PlantedRun, run_dir: Path, tmp_path: Path
) -> None:
    table = rows(planted)
    assert len(table) == 1000
    result = cli("review", str(run_dir), "--labels", str(write_csv(tmp_path / "l.csv", table)))

    assert result.returncode == 0, result.stderr
    assert f"imported 1000 label(s) into {run_dir / LABELS_FILE}" in result.stdout
    labels = read_labels(run_dir)
    assert len(labels) == 1000 and all(label.content_key for label in labels)
    # every verdict labelled: the figures are the planted ones exactly
    [agreement] = read_results_json(run_dir / "results.json").judge_agreement
    assert agreement.labelled_trials == 1000
    assert agreement.sensitivity is not None and agreement.specificity is not None
    assert agreement.sensitivity.value == pytest.approx(0.8)
    assert agreement.specificity.value == pytest.approx(0.8)
    assert agreement.corrected_pass_rate is not None
    assert agreement.corrected_pass_rate.value == pytest.approx(0.7)
    assert "sensitivity 80%" in result.stdout and "corrected for the judge's error 70%" in (
        result.stdout
    )
    assert "sensitivity" in (run_dir / "report.html").read_text(encoding="utf-8")
    # kept for later runs, in the output folder the run folder is in
    keys = {label.content_key for label in labels if label.content_key}
    assert len(LabelBank.in_folder(tmp_path / "out").labels_for(keys)) == 1000

    again = cli("review", str(run_dir), "--labels", str(tmp_path / "l.csv"))
    assert again.returncode == 0 and "imported 0 label(s) (1000 already there)" in again.stdout
    assert len(read_labels(run_dir)) == 1000


@pytest.mark.parametrize(
    ("line", "change", "said"),
    [
        (500, {"trial": 7}, "case 'case_124' has no trial 7 in the run"),
        (731, {"label": "maybe"}, "label must be pass, fail or a score from 0 to 1"),
        (999, {"criterion": "safety_v1"}, "criterion 'safety_v1' gave trial"),
        (2, {"reviewer": ""}, "no reviewer"),
        (64, {"case": "nowhere"}, "case 'nowhere' is not in the run"),
    ],
)
def test_a_bad_row_is_named_by_line_and_nothing_is_written(
    cli: Callable[..., CliResult],
    planted: PlantedRun,
    run_dir: Path,
    tmp_path: Path,
    line: int,
    change: dict[str, object],
    said: str,
) -> None:
    table = rows(planted)
    table[line - 2].update(change)  # line 1 is the header
    path = write_csv(tmp_path / "labels.csv", table)
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}

    result = cli("review", str(run_dir), "--labels", str(path))

    assert result.returncode == 2
    assert result.stderr.strip() == f"agentflow-eval: error: {path}, line {line}: {said}" or (
        result.stderr.startswith(f"agentflow-eval: error: {path}, line {line}: {said}")
    )
    assert len(result.stderr.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before
    assert not (tmp_path / "out" / "label-bank").exists()


def test_json_lines_and_scale_labels_import(
    cli: Callable[..., CliResult], planted: PlantedRun, run_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "labels.jsonl"
    table = rows(planted)[:40]
    for row in table:
        row["label"] = 0.9 if row["label"] == "pass" else 0.1
    path.write_text("".join(json.dumps(row) + "\n" for row in table), encoding="utf-8")
    result = cli("review", str(run_dir), "--labels", str(path))
    assert result.returncode == 0, result.stderr
    assert sorted({label.label for label in read_labels(run_dir)}) == [0.1, 0.9]

    duplicate = tmp_path / "twice.jsonl"
    duplicate.write_text(json.dumps(table[0]) + "\n" + json.dumps(table[0]) + "\n")
    result = cli("review", str(run_dir), "--labels", str(duplicate))
    assert (
        result.returncode == 2
        and "line 2" in result.stderr
        and "first on line 1" in (result.stderr)
    )


def test_a_run_that_did_not_finish_or_no_labels_flag_is_refused(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    result = cli("review", str(tmp_path), "--labels", "x.csv")
    assert result.returncode == 2 and "not a finished run (no results.json)" in result.stderr
