"""``agentflow-eval report`` takes a run folder (or its results.json) and re-renders the
report; a folder that is not a finished run gets one line saying what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.sample_results import sample_run, write_run_dir

from agentflow_eval.cli import main
from agentflow_eval.report.html import render_html
from agentflow_eval.run.expected import with_expectations


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    run, _eval_set = sample_run(trials=2)
    return write_run_dir(tmp_path / "run", run)


def test_a_run_folder_is_rerendered_in_place(run_dir: Path, capsys) -> None:
    (run_dir / "report.html").unlink()
    assert main(["report", str(run_dir)]) == 0
    assert capsys.readouterr().out.strip() == str(run_dir / "report.html")
    assert "weather_multi_city" in (run_dir / "report.html").read_text(encoding="utf-8")


def test_results_json_and_an_output_file_still_work(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "again.html"
    assert main(["report", str(run_dir / "results.json"), "-o", str(out)]) == 0
    assert "weather_multi_city" in out.read_text(encoding="utf-8")


def test_an_unfinished_run_folder_says_how_to_finish_it(tmp_path: Path, capsys) -> None:
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    (unfinished / "run.json").write_text(json.dumps({"run_id": "x"}))
    assert main(["report", str(unfinished)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agentflow-eval: error: {unfinished}: this run has no results.json yet")
    assert f"agentflow-eval run --resume {unfinished}" in err
    assert err.count("\n") == 1


def test_a_folder_that_is_no_run_and_a_missing_file_are_one_line(tmp_path: Path, capsys) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "not a run folder (no results.json)" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"agentflow-eval: error: {tmp_path / 'nope.json'}: no such run folder or results.json "
        "(a run prints its folder as 'results in ...')\n"
    )


def test_the_eval_set_fills_expectations_results_were_written_without(
    tmp_path: Path, capsys
) -> None:
    run, eval_set = sample_run(trials=2, with_expected=False)
    folder = write_run_dir(tmp_path / "old", run)
    assert main(["report", str(folder)]) == 0
    alone = (folder / "report.html").read_text(encoding="utf-8")
    evalset = tmp_path / "travel.evalset.json"
    evalset.write_text(eval_set.model_dump_json(), encoding="utf-8")
    assert main(["report", str(folder), "--evalset", str(evalset)]) == 0
    page = (folder / "report.html").read_text(encoding="utf-8")
    filled = with_expectations(run, eval_set)
    assert all(case.expected for case in filled.cases) and page != alone
    assert page == render_html(filled)
