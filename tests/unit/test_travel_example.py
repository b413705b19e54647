"""The travel example: one eval set with every kind of case (multi-turn, a simulated
user, a mocked tool with an injected fault, a step from a seeded history, a component),
run offline as README shows it. Its tools refuse to run, so a pass proves the mocks
answered every call."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from agentflow_eval import demo
from agentflow_eval.agents.loader import load_agent
from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.files.loading import load_evalset
from agentflow_eval.pipeline.evaluate import evaluate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "travel"


async def test_every_kind_of_case_passes_offline_and_no_tool_runs(tmp_path: Path) -> None:
    demo.install()  # the simulated user's model, offline
    eval_set = load_evalset(EXAMPLE / "travel.evalset.json").eval_set
    config = load_config(EXAMPLE / "eval_config.json")
    agent = load_agent("examples.travel.agent:agent")
    run = await evaluate(agent, eval_set, config, runs=10, output_dir=tmp_path)
    by_case = Counter(r.trial.case_id for r in run.trials if r.status == "passed")
    assert by_case == {case.eval_id: 10 for case in eval_set.eval_cases}
    served = Counter(
        (r.trial.case_id, call.served_by)
        for r in run.trials
        for turn in r.trial.turns
        for call in turn.tool_calls
    )
    assert {how for (_, how) in served} == {"mock", "fault"}  # never "tool"
    assert 0 < served[("flaky_weather", "fault")] < 10  # the agent survived its faults
    scenario = [r.trial for r in run.trials if r.trial.case_id == "weather_chat"]
    assert all(len(trial.turns) > 1 for trial in scenario)  # the simulated user went on
    (component,) = {
        r.trial.turns[0].output for r in run.trials if r.trial.case_id == "intent_weather"
    }
    assert component == "weather"
