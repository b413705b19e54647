"""A paired, adaptive run split into shards through the evaluate flow: each shard runs
both agents in pairs on its cases, its waves within its share of the budget, its flags
counted over every case of the run; the parent merges both sides and the waves and
reaches the verdicts an unsharded paired run reaches on the planted drops.

The shard runs are flow runs of the run's deployment on a pool's workers; here the
parent's ``arun_deployment`` runs each as a subflow of this process (the e2e tier,
tests/e2e/test_scale_out.py, runs them on real workers), handing back through Prefect's
default result storage as a pool's shared storage would."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentflow_eval.compare.models import SequentialSummary
from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.flows.support import runtime
from agentflow_eval.models.request import RunRequest
from agentflow_eval.pipeline.execute import execute
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.pipeline.pairs import read_waves
from agentflow_eval.run.plan import AGAINST_FOLDER
from tests.support import paired_agents

AGENTS = Path(paired_agents.__file__)
ALPHA = 0.05


@pytest.fixture
def evalset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with paired_agents.served_evalset(tmp_path, monkeypatch) as path:
        yield path


@pytest.fixture
def shards_in_process(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Each shard run the parent starts, run as a subflow here; the parameters each was
    given are kept."""
    started: list[dict[str, Any]] = []

    async def run_shard(_deployment: object, *, parameters: dict[str, Any], **_: object) -> Any:
        started.append(parameters)
        state = await evaluate(**parameters, return_state=True)
        return SimpleNamespace(name=f"shard-{parameters['shard']['index']}", state=state)

    monkeypatch.setattr(runtime, "deployment", SimpleNamespace(id="in-process", name="paired"))
    monkeypatch.setattr(runtime, "arun_deployment", run_shard)
    return started


def _request(evalset: str, out: Path, **settings: Any) -> RunRequest:
    """Planted drops (c00, c01, c10) under an adaptive design whose waves give each case
    its pairs 4 at a time up to a cap of 25 (5 + 4 x 5), with a budget the run does not
    reach: each case then gets the same pairs however the cases are split."""
    return RunRequest(
        agent=f"{AGENTS}:dropped",
        against=f"{AGENTS}:steady_a",
        evalset=evalset,
        runs=5,
        max_concurrency=16,
        until_decided=True,
        max_trials=1200,
        max_pairs_per_case=25,
        output_dir=str(out),
        **settings,
    )


def _summary(outcome: RunOutcome) -> SequentialSummary:
    assert outcome.comparison is not None and outcome.comparison.comparison is not None
    summary = outcome.comparison.comparison.sequential
    assert summary is not None
    return summary


def _verdicts(summary: SequentialSummary) -> dict[str, tuple[str, int, float]]:
    return {case.case_id: (case.status, case.pairs, case.e_value) for case in summary.cases}


async def test_a_sharded_adaptive_paired_run_decides_as_an_unsharded_one(
    evalset: str, tmp_path: Path, shards_in_process: list[dict[str, Any]]
) -> None:
    whole = _summary(await execute(_request(evalset, tmp_path / "whole")))
    assert {c.case_id for c in whole.cases if c.status == "regressed"} == set(paired_agents.DROPPED)

    outcome = await evaluate(**_request(evalset, tmp_path / "out", shards=2).flow_parameters())
    assert [
        p["shard"]["index"] for p in sorted(shards_in_process, key=lambda p: p["shard"]["index"])
    ] == [0, 1]
    sharded = _summary(outcome)
    # the same per-case statuses, pairs and evidence, over all 20 cases, m = 20
    assert _verdicts(sharded) == _verdicts(whole)
    assert sharded.threshold == whole.threshold == pytest.approx(20 / ALPHA)
    assert (sharded.trials, sharded.fixed_design_trials, sharded.counts) == (
        whole.trials,
        whole.fixed_design_trials,
        whole.counts,
    )
    assert sharded.adaptive and sharded.max_trials == 1200
    assert outcome.comparison is not None and outcome.comparison.regressed

    # both sides merged: the candidate's folder, its against/ folder, and the waves
    run_dir = outcome.run_dir
    pairs = sum(case.pairs for case in sharded.cases)
    assert outcome.run.totals.trials == pairs
    against = json.loads((run_dir / AGAINST_FOLDER / "results.json").read_text())
    assert against["totals"]["trials"] == pairs and against["agent"] == "steady_a"
    assert (run_dir / AGAINST_FOLDER / "report.html").is_file()
    waves = read_waves(run_dir)
    assert 20 * 5 + sum(len(wave) for wave in waves) == pairs

    # each shard decided its own cases with every case of the run counted, within its
    # share of the budget (10 of 20 cases: 600 of 1200 trials)
    shard_runs = sorted((tmp_path / "out" / "shard-runs").glob("*/*/comparison.json"))
    assert len(shard_runs) == 2
    for path in shard_runs:
        found = json.loads(path.read_text())["comparison"]["sequential"]
        assert found["threshold"] == pytest.approx(20 / ALPHA)
        assert found["max_trials"] == 600 and found["trials"] <= 600
        assert len(found["cases"]) == 10


def _cut_back(folder: Path, kept_waves: list[list[tuple[str, int]]], cases: set[str]) -> None:
    """Leave ``folder`` (a paired run's) as a stop after its first round and
    ``kept_waves`` would have: each side's trials and verdicts of those pairs only."""
    kept = {(case, index) for case in cases for index in range(5)}
    kept |= {tuple(key) for wave in kept_waves for key in wave}
    for side in (folder, folder / AGAINST_FOLDER):
        for name in ("trials.jsonl", "judged.jsonl"):
            lines = (side / name).read_text().splitlines(keepends=True)
            records = [json.loads(line) for line in lines]
            held = [
                line
                for line, record in zip(lines, records, strict=True)
                if ((found := record.get("trial", record))["case_id"], found["trial_index"]) in kept
            ]
            (side / name).write_text("".join(held))
        for name in ("results.json", "comparison.json"):
            (side / name).unlink(missing_ok=True)
    (folder / "waves.jsonl").write_text(
        "".join(json.dumps({"wave": n, "pairs": w}) + "\n" for n, w in enumerate(kept_waves, 1))
    )


async def test_a_paired_shard_resumes_alone_from_its_pairs(evalset: str, tmp_path: Path) -> None:
    """A shard's state is its stored pairs and waves: a shard stopped after two waves and
    resumed on its own reaches the verdicts of one that never stopped."""
    shard = {"index": 1, "count": 2, "parent_run_id": "parent"}
    whole = await evaluate(**_request(evalset, tmp_path / "whole", shard=shard).flow_parameters())
    stopped = await evaluate(**_request(evalset, tmp_path / "cut", shard=shard).flow_parameters())
    folder = stopped.run_dir
    kept_waves = read_waves(folder)[:2]
    assert len(read_waves(folder)) > len(kept_waves) == 2, "waves are left to run on resume"
    cases = {case.case_id for case in _summary(stopped).cases}
    _cut_back(folder, kept_waves, cases)
    resumed = await evaluate(
        **_request(evalset, tmp_path / "cut", shard=shard, resume=str(folder)).flow_parameters()
    )
    assert resumed.run_dir == folder
    assert _verdicts(_summary(resumed)) == _verdicts(_summary(whole))
    assert _summary(resumed).threshold == pytest.approx(20 / ALPHA)  # m: the run's cases
    assert read_waves(folder) == read_waves(whole.run_dir)
