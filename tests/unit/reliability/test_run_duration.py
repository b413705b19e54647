"""A run's duration is measured on the monotonic clock and adds up over its sessions: a
resume on a machine whose wall clock is a day behind the run's start never reports a
negative duration."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.pipeline.runner import DirectStages, RunServices, run_pipeline
from agentflow_eval.run.plan import RunInputs, RunOptions, plan_run
from tests.support.faults import ANSWER, answer_config, answer_evalset


def agent(message: str) -> str:
    return ANSWER


AGENT = PythonAgent(agent)


async def test_a_resume_with_the_wall_clock_a_day_behind_has_a_positive_duration(
    tmp_path: Path,
) -> None:
    await evaluate(AGENT, answer_evalset(2), answer_config(), runs=2, output_dir=tmp_path)
    [run_dir] = list((tmp_path / "faults").iterdir())
    record = json.loads((run_dir / "run.json").read_text())
    first = record["elapsed_s"]
    assert first > 0  # the first session's time, recorded when it let go of the folder
    # the run "started" a day after now: a resume's wall clock is a day behind its start
    start = datetime.fromisoformat(record["started_at"]) + timedelta(days=1)
    record["started_at"] = start.isoformat()
    (run_dir / "run.json").write_text(json.dumps(record))
    (run_dir / "results.json").unlink()

    inputs = RunInputs.of(answer_evalset(2), answer_config())
    with plan_run(inputs, RunOptions(), agent=AGENT, resume=run_dir) as handle:
        async with ModelClient() as models:
            await run_pipeline(handle.plan, RunServices(AGENT, models), DirectStages())
    results = read_results_json(run_dir / "results.json")
    assert results.finished_at < results.started_at  # what the wall clock says
    assert results.duration_s >= first  # what the monotonic clock says
    assert json.loads((run_dir / "run.json").read_text())["elapsed_s"] >= results.duration_s
