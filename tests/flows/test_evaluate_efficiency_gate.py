"""The evaluate flow gates on efficiency only beyond the tolerance it is given: a slower
agent run beside the quick one (latency is measured pair by pair) with
``max_latency_increase`` fails its gate, its ``agentflow.eval.regressed`` event names the
slower case, and without the tolerance the same run is reported only; compared with a run
made apart, the same slowdown is not called at all."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from prefect.testing.fixtures import asserting_events_worker  # noqa: F401 (a fixture)
from support.evalsets import one_case_evalset

from agentflow_eval.flows.evaluate import RegressionGateFailed, evaluate
from agentflow_eval.models.request import RunRequest

CASE = "rain-in-paris"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    evalset = one_case_evalset(
        tmp_path / "paris.evalset.json", "paris_latency", CASE, "What is the weather?", "rain"
    )
    agents = tmp_path / "paris_speed.py"
    agents.write_text(
        "import time\n\n"
        "def quick(message):\n    return 'Light rain in Paris.'\n\n"
        "def slow(message):\n    time.sleep(0.25)\n    return 'Light rain in Paris.'\n"
    )
    return {"evalset": str(evalset), "quick": f"{agents}:quick", "slow": f"{agents}:slow"}


async def test_a_slower_agent_fails_the_gate_only_beyond_its_tolerance(
    files,
    tmp_path,
    asserting_events_worker,  # noqa: F811
) -> None:
    params = RunRequest(
        agent=files["quick"], evalset=files["evalset"], runs=8, output_dir=str(tmp_path / "out")
    )
    quick = await evaluate(**params.flow_parameters())
    apart = await evaluate(
        **params.updated(agent=files["slow"], baseline=str(quick.run_dir)).flow_parameters()
    )
    assert apart.comparison is not None and apart.comparison.comparison is not None
    efficiency = apart.comparison.comparison.cases[0].efficiency
    assert efficiency is not None
    latency = next(m for m in efficiency.measures if m.measure == "latency")
    assert latency.verdict == "no significant change"  # runs made apart: not called
    slow = params.updated(agent=files["slow"], against=files["quick"], fail_on_regression=True)
    reported = await evaluate(**slow.flow_parameters())  # no tolerance: reported, passes
    assert reported.comparison is not None and reported.comparison.comparison is not None
    case = reported.comparison.comparison.cases[0]
    assert case.verdict == "no significant change" and case.efficiency is not None
    latency = next(m for m in case.efficiency.measures if m.measure == "latency")
    assert latency.verdict == "slower" and not latency.beyond_tolerance

    asserting_events_worker._client.events.clear()
    gated = RunRequest.model_validate({**slow.model_dump(), "max_latency_increase": "50%"})
    assert gated.max_latency_increase == 0.5
    with pytest.raises(RegressionGateFailed) as failed:
        await evaluate(**gated.flow_parameters())
    record = failed.value.record
    assert record.comparison is not None and record.comparison.efficiency is not None
    assert record.comparison.efficiency.regressed and record.gate_failed
    written = json.loads(failed.value.outcome.run_dir.joinpath("comparison.json").read_text())
    assert written["comparison"]["efficiency"]["tolerances"]["max_latency_increase"] == 0.5
    await asyncio.to_thread(asserting_events_worker.wait_until_empty)
    events = {e.event: e for e in asserting_events_worker._client.events}
    payload = events["agentflow.eval.regressed"].payload
    assert payload["regressed_cases"] == []
    (finding,) = [f for f in payload["efficiency"] if f["case_id"] == CASE]
    assert finding["measure"] == "latency" and finding["verdict"] == "slower"
    assert finding["beyond_tolerance"] is True and finding["tolerance"] == 0.5
