"""The weather example: its tool, and the whole agent on the offline demo model."""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from agentflow_eval.agents.base import SessionContext, TrajectoryRecorder, bind_session
from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.demo import install as install_demo
from agentflow_eval.models.evalset import Message

MakeContext = Callable[..., SessionContext]
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def weather() -> ModuleType:
    """``examples.weather.agent``, imported as the CLI does (the project root on sys.path)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    install_demo()  # the example's model, as the front doors install it
    return importlib.import_module("examples.weather.agent")


def test_get_weather_has_the_seed_cities(weather: ModuleType) -> None:
    get_weather = weather.get_weather
    assert get_weather("New York") == {
        "location": "New York",
        "condition": "sunny",
        "temperature": 72,
        "unit": "°F",
    }
    assert get_weather(" tokyo ")["temperature"] == 75
    assert get_weather("London")["condition"] == "cloudy"
    assert get_weather("London")["temperature"] == 55


def test_an_unknown_city_is_a_clear_error(weather: ModuleType) -> None:
    error = weather.get_weather("Atlantis")["error"]
    assert "no weather data for 'Atlantis'" in error
    assert "Tokyo" in error


def test_the_agent_offers_get_weather_on_the_demo_model(weather: ModuleType) -> None:
    agent: LiteLLMAgent = weather.agent
    assert agent.model == "agentflow-demo/weather"
    assert agent.name == "weather_agent"
    [tool] = agent.tools
    assert tool.schema["function"]["parameters"]["required"] == ["location"]


async def run(
    agent: LiteLLMAgent, make_context: MakeContext, text: str, trial: int
) -> tuple[str, list[str]]:
    ctx = make_context(case_id="weather", trial_index=trial)
    with bind_session(ctx):
        session = await agent.start_session(ctx)
        recorder = TrajectoryRecorder()
        answer = await session.respond(Message.of(text), recorder)
    return answer, [call.args["location"] for call in recorder.tool_calls]


async def test_most_trials_answer_like_the_seed_and_runs_repeat(
    weather: ModuleType, make_context: MakeContext
) -> None:
    question = "Compare the weather in Tokyo and London"
    outcomes = [await run(weather.agent, make_context, question, t) for t in range(12)]
    assert outcomes == [await run(weather.agent, make_context, question, t) for t in range(12)]
    answers = Counter(answer for answer, _ in outcomes)
    assert answers.most_common(1)[0][0] == "Tokyo is sunny at 75°F while London is cloudy at 55°F."
    assert len(answers) > 1
    assert all(set(places) <= {"Tokyo", "London"} for _, places in outcomes)
