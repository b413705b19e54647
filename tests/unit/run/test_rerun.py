"""``--rerun-errored``: a finished run copied into a new folder without its errored
trials, so that resuming the copy runs only those again."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentflow_eval.files.jsonl import iter_records
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.results import Trial, TrialError, TrialResult
from agentflow_eval.run.rerun import prepare_rerun
from agentflow_eval.run.run_json import params_from_run_dir

START = datetime(2026, 11, 20, tzinfo=UTC)


def _trial(case: str, index: int, *, errored: bool) -> Trial:
    error = TrialError(kind="infrastructure", message="503 from provider") if errored else None
    return Trial(case_id=case, trial_index=index, started_at=START, error=error)


def _run_folder(root: Path, errored: set[tuple[str, int]], *, params: bool = True) -> Path:
    run_dir = root / "support" / "20261120T000000Z-aaaa1111"
    run_dir.mkdir(parents=True)
    meta: dict = {"run_id": "aaaa1111", "started_at": START.isoformat(), "runs_per_case": 2}
    if params:
        meta["params"] = RunRequest(agent="bot.py:agent", evalset="s.json").model_dump(
            mode="json", exclude={"resume"}
        )
    (run_dir / "run.json").write_text(json.dumps(meta))
    trials = [_trial(c, i, errored=(c, i) in errored) for c in ("a", "b") for i in range(2)]
    (run_dir / "trials.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in trials))
    judged = [TrialResult(trial=t, status="errored" if t.error else "passed") for t in trials]
    (run_dir / "judged.jsonl").write_text("".join(j.model_dump_json() + "\n" for j in judged))
    return run_dir


def test_the_copy_leaves_out_errored_trials_and_their_verdicts(tmp_path: Path) -> None:
    source = _run_folder(tmp_path, {("a", 1), ("b", 0)})
    before = {p.name: p.read_bytes() for p in source.iterdir()}
    rerun = prepare_rerun(source)
    assert (rerun.errored, rerun.kept) == (2, 2)
    assert rerun.run_dir.parent == source.parent and rerun.run_dir != source
    kept = [t.key for t in iter_records(rerun.run_dir / "trials.jsonl", Trial)]
    assert kept == [("a", 0), ("b", 1)]
    judged = [r.trial.key for r in iter_records(rerun.run_dir / "judged.jsonl", TrialResult)]
    assert judged == [("a", 0), ("b", 1)]
    meta = json.loads((rerun.run_dir / "run.json").read_text())
    assert meta["run_id"] != "aaaa1111" and meta["runs_per_case"] == 2
    assert rerun.run_dir.name.endswith(meta["run_id"])
    # the copy resumes from its own parameters; the source is untouched
    assert params_from_run_dir(rerun.run_dir).resume == str(rerun.run_dir)
    assert {p.name: p.read_bytes() for p in source.iterdir()} == before


def test_a_run_without_errors_needs_no_copy(tmp_path: Path) -> None:
    source = _run_folder(tmp_path, set())
    rerun = prepare_rerun(source)
    assert (rerun.run_dir, rerun.errored, rerun.kept) == (source, 0, 4)
    assert len(list(source.parent.iterdir())) == 1


def test_only_run_folders_started_from_parameters(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not a run folder"):
        prepare_rerun(tmp_path)
    source = _run_folder(tmp_path, {("a", 0)}, params=False)
    with pytest.raises(ValueError, match="started from Python"):
        prepare_rerun(source)
