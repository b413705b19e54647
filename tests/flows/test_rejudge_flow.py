"""The evaluate flow's ``rejudge_from``: a finished run's stored trials judged again under
Prefect, as a deployment's form starts it, without calling the agent.

The agent is an OpenAI-compatible HTTP endpoint (a scripted server, counting requests);
the judges are deterministic, so every request the server sees is the agent's."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect.client.schemas.objects import TaskRun

from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.models.request import RunRequest
from agentflow_eval.report import read_results_json
from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from tests.support.prefect_records import flow_run_with, task_runs_of

ROOT = Path(__file__).resolve().parents[2]
EVALSET = ROOT / "examples" / "weather" / "weather.evalset.json"
ANSWER = "The weather in New York is sunny with a temperature of 72°F."


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(handler=lambda body: Reply.text(ANSWER)) as running:
        yield running


def _config(path: Path, threshold: float, **more: dict[str, object]) -> str:
    criteria = {"response_match_score": {"threshold": threshold}, **more}
    path.write_text(json.dumps({"criteria": criteria}))
    return str(path)


def _task_counts(runs: list[TaskRun]) -> Counter[str]:
    return Counter(run.task_key.split("-")[0] for run in runs)


async def test_the_flow_rejudges_a_run_without_calling_its_agent(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    agent = f"{server.url}/chat/completions"
    source = await evaluate(
        **RunRequest(
            agent=agent,
            evalset=str(EVALSET),
            config=_config(tmp_path / "strict.json", 0.8),
            runs=2,
            output_dir=str(tmp_path / "out"),
        ).flow_parameters()
    )
    assert server.request_count == 4  # one request per trial

    # the form as a deployment keeps it (the agent still filled in), plus the source run
    # and a config with a lower threshold and a new criterion
    rejudged = await evaluate(
        **RunRequest(
            agent=agent,
            evalset=str(EVALSET),
            config=_config(tmp_path / "lenient.json", 0.0, final_contains={"text": "72°F"}),
            output_dir=str(tmp_path / "out"),
            rejudge_from=str(source.run_dir),
        ).flow_parameters()
    )

    assert server.request_count == 4  # the agent was not called
    flow_run = await flow_run_with(rejudge_from=str(source.run_dir))
    counts = _task_counts(
        await task_runs_of(flow_run, until=lambda runs: _task_counts(runs)["report_task"] > 0)
    )
    assert counts["run_trials_task"] == 0
    assert counts["copy_trials_task"] == 1
    new = rejudged.run_dir
    assert new != source.run_dir and new.parent == source.run_dir.parent
    assert (new / "trials.jsonl").read_bytes() == (source.run_dir / "trials.jsonl").read_bytes()
    run = read_results_json(new / "results.json")
    assert run.rejudged_from is not None
    assert (run.rejudged_from.run_id, run.rejudged_from.run_dir) == (
        source.run.run_id,
        str(source.run_dir),
    )
    # the multi-city answer fails ROUGE at 0.8 and passes at 0.0; the new criterion judged
    assert source.run.totals.passed < run.totals.passed
    assert {c.criterion for t in run.trials for c in t.criteria} == {
        "response_match_score",
        "final_contains",
    }
    assert json.loads((new / "run.json").read_text())["params"]["rejudge_from"] == str(
        source.run_dir
    )
