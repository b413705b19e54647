"""``agentflow-eval rejudge``: what it refuses is one line on stderr, exit 2, before
anything starts and with nothing written (a Prefect API is named, a closed port: no
server is launched, none is reached). Re-judging itself, through the flow:
tests/flows/test_rejudge_flow.py; from Python: tests/unit/run/test_rejudge.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.results import Trial

ROOT = Path(__file__).resolve().parents[3]
EVALSET = str(ROOT / "examples/weather/weather.evalset.json")


def _run_folder(
    root: Path, case_ids: list[str], *, finished: bool = True, params: bool = True
) -> Path:
    """A run folder as a finished run of the weather eval set leaves it (its trials,
    run.json, results.json), with trials of ``case_ids``."""
    run_dir = root / "weather" / "20261120T000000Z-aaaa1111"
    run_dir.mkdir(parents=True)
    meta: dict[str, object] = {
        "run_id": "aaaa1111",
        "started_at": datetime(2026, 11, 20, tzinfo=UTC).isoformat(),
        "runs_per_case": 1,
        "agent": "weather_agent",
    }
    if params:
        meta["params"] = RunRequest(evalset=EVALSET).model_dump(mode="json")
    (run_dir / "run.json").write_text(json.dumps(meta))
    started = datetime(2026, 11, 20, tzinfo=UTC)
    trials = [Trial(case_id=case, trial_index=0, started_at=started) for case in case_ids]
    (run_dir / "trials.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in trials))
    if finished:
        (run_dir / "results.json").write_text(json.dumps({"run_id": "aaaa1111"}))
    return run_dir


def _one_line_exit_2(result, *expected: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for text in expected:
        assert text in lines[0]


def test_a_folder_that_is_not_a_run(cli, tmp_path: Path) -> None:
    _one_line_exit_2(cli("rejudge", str(tmp_path)), "not a run folder (no run.json)")


def test_a_run_without_trials(cli, tmp_path: Path) -> None:
    source = _run_folder(tmp_path, [])
    _one_line_exit_2(cli("rejudge", str(source)), "has no trials (trials.jsonl)")


def test_an_unfinished_run_says_how_to_finish_it(cli, tmp_path: Path) -> None:
    source = _run_folder(tmp_path, ["weather_lookup_simple"], finished=False)
    _one_line_exit_2(
        cli("rejudge", str(source)),
        "did not finish (no results.json)",
        f"agentflow-eval run --resume {source}",
    )


def test_an_eval_set_without_the_runs_cases(cli, tmp_path: Path) -> None:
    source = _run_folder(tmp_path, ["weather_lookup_simple", "gone"])
    before = sorted(source.parent.iterdir())
    _one_line_exit_2(
        cli("rejudge", str(source)),
        "cannot re-judge",
        "1 of the run's cases are not in it ('gone')",
    )
    assert sorted(source.parent.iterdir()) == before  # no run folder was made


def test_a_run_started_from_python_needs_its_eval_set(cli, tmp_path: Path) -> None:
    source = _run_folder(tmp_path, ["weather_lookup_simple"], params=False)
    _one_line_exit_2(cli("rejudge", str(source)), "started from Python", "name the eval set")


def test_a_missing_config_file(cli, tmp_path: Path) -> None:
    source = _run_folder(tmp_path, ["weather_lookup_simple"])
    missing = str(tmp_path / "nope.json")
    _one_line_exit_2(cli("rejudge", str(source), "--config", missing), "nope.json")
