"""A framework agent on the offline demo server is a simulated run, whatever model name its
client sends: docs/frameworks/langgraph.md's graph with its ``gpt-4o-mini``, pointed at the
demo server as the page's offline note says, is marked simulated in results.json and on
the scorecard, and its calls are priced unknown — neither $0 nor gpt-4o-mini's list
price."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain_openai")

from agentflow_eval import AgentEvaluator
from agentflow_eval.agents import frameworks
from agentflow_eval.demo.names import SIMULATED_LABEL
from agentflow_eval.demo.server import DemoServer
from agentflow_eval.models.evalset import EvalSet
from tests.support.cli_in_process import run_cli
from tests.support.markdown_doc import blocks_of

REPO = Path(__file__).resolve().parents[2]


def _page_files(project: Path, demo_url: str) -> None:
    """The page's graph and eval set, the graph's client pointed at the demo server and
    its model name kept."""
    for block in blocks_of((REPO / "docs" / "frameworks" / "langgraph.md").read_text()):
        name = block.attrs.get("file")
        if name in ("my_graph.py", "weather.evalset.json"):
            text = block.text
            if name == "my_graph.py":
                kept = 'ChatOpenAI(model="gpt-4o-mini", max_retries=2)'
                assert kept in text
                text = text.replace(
                    kept,
                    f'ChatOpenAI(model="gpt-4o-mini", max_retries=2, base_url="{demo_url}", '
                    'api_key="offline", disable_streaming=True)',
                )
            (project / name).write_text(text)


def test_a_langgraph_agent_on_the_demo_server_is_simulated_and_unpriced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(tmp_path)
    with DemoServer() as server:
        _page_files(tmp_path, server.url)
        result = run_cli(
            capsys, "run", "my_graph.py:graph", "weather.evalset.json", "--runs", "2",
            "--no-prefect", "--output", "out",
        )  # fmt: skip
    assert result.returncode in (0, 1), result.stdout + result.stderr
    (results_file,) = (tmp_path / "out").rglob("results.json")
    results = json.loads(results_file.read_text())
    assert results["simulated"] is True
    usage = results["totals"]["usage"]
    assert usage["calls"] > 0 and usage["unpriced_calls"] == usage["calls"]
    assert usage["cost_usd"] == 0.0
    figures = [f for case in results["cases"] for f in case["trial_figures"]]
    assert figures and all(f["cost_usd"] is None for f in figures)
    assert SIMULATED_LABEL in result.stdout
    assert "spend: agent unknown" in result.stdout
    assert "$0.0000" not in result.stdout


def _weather(location: str) -> str:
    """The current weather in a city.

    Args:
        location: The city.
    """
    return {"Tokyo": "sunny, 75°F"}.get(location, "unknown")


def _adk_agent(url: str) -> object:
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent
    from google.adk.models.lite_llm import LiteLlm

    model = LiteLlm(model="openai/gpt-4o-mini", api_base=url, api_key="offline")
    return LlmAgent(name="weather_agent", model=model, tools=[_weather])


def _pydantic_ai_agent(url: str) -> object:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=url, api_key="offline")
    return Agent(OpenAIChatModel("gpt-4o-mini", provider=provider), tools=[_weather])


@pytest.mark.parametrize("make", [_adk_agent, _pydantic_ai_agent], ids=["adk", "pydantic_ai"])
async def test_other_frameworks_on_the_demo_server_are_simulated_and_unpriced(
    make: Any, tmp_path: Path
) -> None:
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "weather",
            "eval_cases": [
                {"eval_id": "tokyo", "conversation": [{"user_content": "Weather in Tokyo?"}]}
            ],
        }
    )
    with DemoServer() as server:
        agent = frameworks.wrap(make(server.url), name="weather_agent")
        run = await AgentEvaluator(agent, output_dir=tmp_path).evaluate(eval_set, runs=1)
    assert run.simulated is True
    usage = run.totals.usage
    assert usage.calls > 0 and usage.unpriced_calls == usage.calls


async def test_the_agents_sdk_example_names_the_demo_model_offline(tmp_path: Path) -> None:
    """The Agents SDK records the model name the agent asks for (not the reply's), so its
    offline example names the demo model, as docs/frameworks/openai_agents.md says."""
    pytest.importorskip("agents")
    from agentflow_eval.agents.loader import load_agent

    agent = load_agent("examples.openai_agents_weather.agent:agent")
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "weather",
            "eval_cases": [
                {"eval_id": "tokyo", "conversation": [{"user_content": "Weather in Tokyo?"}]}
            ],
        }
    )
    run = await AgentEvaluator(agent, output_dir=tmp_path).evaluate(eval_set, runs=1)
    assert run.simulated is True
    assert run.totals.usage.calls > 0
    assert run.totals.usage.unpriced_calls == run.totals.usage.calls
