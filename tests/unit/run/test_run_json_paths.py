"""A run folder is its own resume point from anywhere: relative paths in its run.json are
found from the directory the run was started in when they are not found from here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentflow_eval.run.run_json import RunRecord


def started_run(project: Path) -> Path:
    (project / "evals").mkdir(parents=True)
    (project / "evals" / "set.evalset.json").write_text("{}")
    (project / "config.json").write_text("{}")
    (project / "my_agent.py").write_text("")
    run_dir = project / "eval-results" / "set" / "20260101T000000Z-abcd1234"
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(
        json.dumps(
            {
                "run_id": "abcd1234",
                "started_at": "2026-01-01T00:00:00+00:00",
                "runs_per_case": 2,
                "cwd": str(project),
                "params": {
                    "agent": "my_agent.py:agent",
                    "evalset": "evals/set.evalset.json",
                    "config": "config.json",
                },
            }
        )
    )
    return run_dir


def test_a_resume_from_another_directory_finds_the_runs_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    run_dir = started_run(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    params = RunRecord.read(run_dir).params()
    assert params.evalset == str(project / "evals" / "set.evalset.json")
    assert params.config == str(project / "config.json")
    assert params.agent == f"{project / 'my_agent.py'}:agent"
    assert params.resume == str(run_dir)


def test_from_the_starting_directory_the_paths_stay_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    run_dir = started_run(project)
    monkeypatch.chdir(project)
    params = RunRecord.read(run_dir).params()
    assert (params.evalset, params.config, params.agent) == (
        "evals/set.evalset.json",
        "config.json",
        "my_agent.py:agent",
    )
