"""A paired, adaptive run through the evaluate flow: each round of pairs is a task run of
its own (``run-pairs-first-round``, ``run-pairs-wave-1``, ...) holding that round's work,
each side is judged in its own task runs, and the flow ends Failed when the pairs show a
regression it was asked to fail on, after the comparison is written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentflow_eval.flows.evaluate import RegressionGateFailed, evaluate
from agentflow_eval.models.request import RunRequest
from agentflow_eval.pipeline.pairs import read_waves
from tests.support import paired_agents
from tests.support.prefect_records import flow_run_with, task_runs_of

AGENTS = Path(paired_agents.__file__)


@pytest.fixture
def evalset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with paired_agents.served_evalset(tmp_path, monkeypatch) as path:
        yield path


async def test_each_wave_is_a_task_run_of_its_own(evalset: str, tmp_path: Path) -> None:
    request = RunRequest(
        agent=f"{AGENTS}:dropped",
        against=f"{AGENTS}:steady_a",
        evalset=evalset,
        runs=5,
        until_decided=True,
        max_trials=600,
        fail_on_regression=True,
        output_dir=str(tmp_path / "out"),
        track="paired",
    )
    with pytest.raises(RegressionGateFailed) as failed:
        await evaluate(**request.flow_parameters())
    outcome = failed.value.outcome
    waves = read_waves(outcome.run_dir)
    assert waves, "the run added pairs"
    flow_run = await flow_run_with(output_dir=str(tmp_path / "out"))
    task_runs = await task_runs_of(
        flow_run, until=lambda runs: any(run.name.startswith("compare-pairs") for run in runs)
    )
    assert flow_run.state is not None and flow_run.state.is_failed()
    names = [run.name for run in task_runs]
    rounds = [name for name in names if name.startswith("run-pairs-")]
    assert sorted(rounds) == sorted(
        ["run-pairs-first-round", *(f"run-pairs-wave-{n}" for n in range(1, len(waves) + 1))]
    )
    # every round's pairs judged on both sides, in task runs of their own
    assert sum(1 for name in names if name.startswith("judge")) == 2 * (len(waves) + 1)
    assert any(name.startswith("compare-pairs") for name in names)
    summary = outcome.comparison.comparison.sequential  # type: ignore[union-attr]
    assert summary is not None
    assert {c.case_id for c in summary.cases if c.status == "regressed"} == set(
        paired_agents.DROPPED
    )
