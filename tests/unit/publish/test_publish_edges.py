"""Publishing to a folder, at its edges: a run folder without its report is one line
saying how to write it (then it publishes); published files get the run folder's mode,
not a temporary file's 0600; and a run that failed a gate it was given (``--fail-under``,
``--min-case-pass-rate``, ``--fail-on-regression``) is published into the history but
never becomes ``latest``, the baseline of the next run — whether the run publishes itself
or ``agentflow-eval publish`` publishes its folder later."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.sample_results import sample_run, write_run_dir

from agentflow_eval.cli import main
from tests.support.faults import ANSWER, answer_config

ROOT = Path(__file__).resolve().parents[3]
AGENT = "tests.unit.publish.test_publish_edges:agent"


def agent(message: str) -> str:
    """Right on case c00 (its message says so), wrong on every other."""
    return ANSWER if "c00" in message else "no idea"


@pytest.fixture
def project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Path]:
    """An eval set of two cases (c00 the agent gets right, c01 it gets wrong), its config,
    in-process CLI runs without Prefect from the repository's folder."""
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(ROOT)
    cases = [
        {
            "eval_id": case_id,
            "conversation": [{"user_content": f"{case_id}?", "expected_final_response": ANSWER}],
        }
        for case_id in ("c00", "c01")
    ]
    evalset = {"eval_set_id": "faults", "eval_cases": cases}
    (tmp_path / "set.evalset.json").write_text(json.dumps(evalset))
    (tmp_path / "config.json").write_text(answer_config().model_dump_json())
    yield tmp_path
    capsys.readouterr()


def _run(project: Path, *flags: str) -> int:
    return main(
        [
            "run",
            AGENT,
            str(project / "set.evalset.json"),
            *("--config", str(project / "config.json")),
            *("--runs", "2", "--no-prefect", "--quiet"),
            *("--output", str(project / "out"), "--publish-to", str(project / "site")),
            *flags,
        ]
    )


def _latest(site: Path) -> str:
    return str(json.loads((site / "faults" / "latest.json").read_text())["run_id"])


def _published_runs(site: Path) -> list[str]:
    return [
        run["run_id"] for run in json.loads((site / "faults" / "runs.json").read_text())["runs"]
    ]


def test_a_run_failing_a_gate_is_published_but_never_latest(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = project / "site"
    assert _run(project) == 0  # report-only: 50%, published, latest
    first = _published_runs(site)[0]
    assert _latest(site) == first
    capsys.readouterr()

    for gate in (("--fail-under", "0.9"), ("--min-case-pass-rate", "0.9")):
        assert _run(project, *gate) == 1
        out = capsys.readouterr().out
        assert "Not made the eval set's latest run: it failed its gate (" in out
        assert len(_published_runs(site)) == 1 + (gate[0] == "--min-case-pass-rate") + 1
        assert _latest(site) == first  # still the run that passed its gates

    assert _run(project, "--fail-under", "0.5") == 0  # a gate it meets
    assert _latest(site) == _published_runs(site)[0] != first


def test_publishing_a_gate_failing_folder_later_keeps_latest(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(project, "--fail-under", "0.9") == 1
    [run_dir] = (project / "out" / "faults").iterdir()
    gates = json.loads((run_dir / "gates.json").read_text())
    assert gates["failed"] and "below min_pass_rate 90%" in gates["reasons"][0]
    elsewhere = project / "elsewhere"
    assert main(["publish", str(run_dir), "--to", str(elsewhere)]) == 0
    assert "Not made the eval set's latest run" in capsys.readouterr().out
    assert len(_published_runs(elsewhere)) == 1
    assert not (elsewhere / "faults" / "latest.json").exists()


def test_a_folder_without_its_report_is_one_line_saying_how_to_write_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, _ = sample_run(trials=2)
    run_dir = write_run_dir(tmp_path / "run", run)
    (run_dir / "report.html").unlink()
    site = tmp_path / "site"
    assert main(["publish", str(run_dir), "--to", str(site)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "missing report.html" in err
    assert f"write the report from its results with `agentflow-eval report {run_dir}`" in err
    assert not site.exists()
    assert main(["report", str(run_dir)]) == 0
    assert main(["publish", str(run_dir), "--to", str(site)]) == 0


def test_published_files_get_the_run_folders_mode(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        run, _ = sample_run(trials=2)
        run_dir = write_run_dir(tmp_path / "run", run)
        assert main(["publish", str(run_dir), "--to", str(tmp_path / "site")]) == 0
    finally:
        os.umask(previous)
    modes = {stat.S_IMODE(path.stat().st_mode) for path in run_dir.iterdir() if path.is_file()}
    assert modes == {0o644}
    published = [path for path in (tmp_path / "site").rglob("*") if path.is_file()]
    assert {p.name for p in published} >= {"report.html", "results.json", "runs.json"}
    assert {stat.S_IMODE(path.stat().st_mode) for path in published} == {0o644}
