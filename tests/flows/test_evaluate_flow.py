"""The evaluate flow end to end under Prefect: the example agent on the demo model."""

from __future__ import annotations

import json
from pathlib import Path

from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.results import SCHEMA_VERSION
from agentflow_eval.report import read_results_json
from tests.support.prefect_records import flow_run_with, task_runs_of

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "weather"


def params(tmp_path: Path, **kw) -> RunRequest:
    return RunRequest(
        agent="examples.weather.agent:agent",
        evalset=str(EXAMPLE / "weather.evalset.json"),
        config=str(EXAMPLE / "eval_config.json"),
        output_dir=str(tmp_path / "out"),
        **kw,
    )


async def test_flow_runs_every_trial_and_writes_results(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    outcome = await evaluate(**params(tmp_path, runs=4).flow_parameters())
    assert outcome.run.trials == []  # the flow returns a summary; trials are on disk
    run = read_results_json(outcome.run_dir / "results.json")
    assert run.totals.trials == 8 and len(run.trials) == 8
    assert {c.case_id for c in run.cases} == {"weather_lookup_simple", "weather_lookup_multi_city"}
    assert run.simulated is True and run.agent_model == "agentflow-demo/weather"
    for case in run.cases:
        assert case.runs == 4
        assert case.passed + case.failed + case.errored + case.not_evaluated == 4
    # trials ran the real tool loop: tools were recorded with their results
    calls = [c for t in run.trials for c in t.trial.tool_calls]
    assert len(calls) >= 8
    assert all(c.name == "get_weather" and c.result for c in calls)
    # the demo model also judged every answer (final_response_match_v2 in the config)
    verdicts = [
        c.status for t in run.trials for c in t.criteria if c.criterion == "final_response_match_v2"
    ]
    assert len(verdicts) == 8 and set(verdicts) <= {"passed", "failed"}
    document = json.loads((outcome.run_dir / "results.json").read_text())
    assert document["schema_version"] == SCHEMA_VERSION
    assert document["totals"]["passed"] == run.totals.passed
    assert len((outcome.run_dir / "trials.jsonl").read_text().splitlines()) == 8

    stages = {"load_evalset_task", "run_trials_task", "judge_task", "report_task"}
    flow_run = await flow_run_with(output_dir=str(tmp_path / "out"))
    task_runs = await task_runs_of(
        flow_run, until=lambda runs: stages <= {tr.task_key.split("-")[0] for tr in runs}
    )
    assert flow_run.state is not None and flow_run.state.is_completed()
    assert stages <= {tr.task_key.split("-")[0] for tr in task_runs}
    # a few tasks, not one per trial
    assert len(task_runs) < 10


def agent_params(tmp_path: Path, source: str) -> RunRequest:
    """Two runs of the example's cases against ``agent`` defined by ``source``."""
    agent_file = tmp_path / "file_agent.py"
    agent_file.write_text(source)
    return params(tmp_path, runs=2).model_copy(update={"agent": f"{agent_file}:agent"})


async def test_a_crashing_agent_fails_its_trials_and_the_run_completes(tmp_path, monkeypatch):
    p = agent_params(
        tmp_path,
        "def agent(message):\n"
        "    if 'Tokyo' in message:\n"
        "        raise RuntimeError('tool backend down')\n"
        "    return 'The weather in New York is currently sunny with a temperature of 72°F.'\n",
    )
    outcome = await evaluate(**p.flow_parameters())
    run = read_results_json(outcome.run_dir / "results.json")
    by_case = {c.case_id: c for c in run.cases}
    assert by_case["weather_lookup_multi_city"].errored == 2
    errors = [t.trial.error for t in run.trials if t.trial.error]
    assert all("tool backend down" in e.message for e in errors)
    # no tool calls reported → trajectory fails, but the answer matched: it ran, and judged
    assert by_case["weather_lookup_simple"].errored == 0


async def test_what_an_agent_prints_in_the_flow_is_kept_with_its_trial(
    tmp_path, monkeypatch, capsys
):
    p = agent_params(
        tmp_path,
        "import threading\n"
        "def agent(message):\n"
        "    print('thinking about', message)\n"
        "    worker = threading.Thread(target=print, args=('a thread of mine',))\n"
        "    worker.start(); worker.join()\n"
        "    return 'The weather in New York is currently sunny with a temperature of 72°F.'\n",
    )
    outcome = await evaluate(**p.flow_parameters())
    run = read_results_json(outcome.run_dir / "results.json")
    assert len(run.trials) == 4
    for result in run.trials:
        output = result.trial.agent_output
        assert output is not None
        assert output.stdout.startswith("thinking about ")
        assert output.stdout.endswith("a thread of mine\n")
    assert "thinking about" not in capsys.readouterr().out


def test_prefect_leaves_the_flow_result_unwalked():
    """Prefect walks a flow's return value for futures, field by field through dataclasses
    and pydantic models; a RunOutcome is returned as is, however many cases the run had."""
    from prefect.utilities.collections import visit_collection
    from support.sample_results import sample_run

    from agentflow_eval.pipeline.outcome import RunOutcome

    run, _ = sample_run()
    outcome = RunOutcome(run=run, run_dir=Path("/tmp/run"), notes=["published"])
    seen: list[object] = []
    visit_collection(outcome, visit_fn=lambda expr: seen.append(expr) or expr, return_data=False)
    assert seen == [outcome]
    assert outcome.notes == ["published"] and outcome.run.cases  # still a usable object
