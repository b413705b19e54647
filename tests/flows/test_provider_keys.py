"""Provider keys from Prefect Secret blocks: set for the agent while the run lasts, and
never written to the run's files, artifacts or logs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from prefect.blocks.system import Secret
from prefect.client.orchestration import get_client

from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.models.request import RunRequest

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-agentflow-test-0123456789"
VARIABLE = "AGENTFLOW_TEST_PROVIDER_KEY"

AGENT = f"""
import os
from prefect import get_run_logger

def agent(message):
    key = os.environ["{VARIABLE}"]
    get_run_logger().warning("calling the provider with %s", key)  # a careless agent
    return "The weather in New York is sunny, 72°F." if key == "{KEY}" else "no key"
"""


async def test_secrets_reach_the_agent_and_nothing_records_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await Secret(value=KEY).save("provider-key", overwrite=True)
    agent_file = tmp_path / "keyed_agent.py"
    agent_file.write_text(AGENT)
    params = RunRequest(
        agent=f"{agent_file}:agent",
        evalset=str(ROOT / "examples/weather/weather.evalset.json"),
        config=str(ROOT / "examples/weather/eval_config.json"),
        runs=1,
        output_dir=str(tmp_path / "out"),
        secrets={VARIABLE: "provider-key"},
    )
    assert VARIABLE not in os.environ
    outcome = await evaluate(**params.flow_parameters())
    assert VARIABLE not in os.environ  # put back as it was

    answers = (outcome.run_dir / "trials.jsonl").read_text()
    assert "sunny" in answers and "no key" not in answers  # the agent had the key
    for path in outcome.run_dir.iterdir():
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path.name
    assert "provider-key" in (outcome.run_dir / "run.json").read_text()  # the name only

    # every log handler of the process saw the line masked (the test harness keeps logs
    # out of its API; pytest's capture is one of those handlers)
    assert "calling the provider with [REDACTED]" in caplog.text
    assert KEY not in caplog.text
    async with get_client() as client:
        artifacts = await client.read_artifacts()
    assert all(KEY not in str(a.data) for a in artifacts)


async def test_a_missing_secret_block_fails_the_run_naming_it(tmp_path: Path) -> None:
    params = RunRequest(
        agent="examples.weather.agent:agent",
        evalset=str(ROOT / "examples/weather/weather.evalset.json"),
        output_dir=str(tmp_path / "out"),
        secrets={"OPENAI_API_KEY": "no-such-block"},
    )
    with pytest.raises(ValueError, match="no Prefect Secret block named 'no-such-block'"):
        await evaluate(**params.flow_parameters())
