"""The examples ship inside the package (``agentflow_eval.examples``): importable from
any project, their files beside them. (Copied into a folder of one's own with ``python -m
agentflow_eval.examples NAME DIR``: tests/e2e/test_commands.py.)"""

from __future__ import annotations

from agentflow_eval.agents.loader import load_agent
from agentflow_eval.examples import notes, weather
from agentflow_eval.files.loading import load_evalset


def test_the_examples_and_their_files_are_importable_from_the_package() -> None:
    assert load_evalset(weather.EVALSET).eval_set.eval_set_id == "weather_agent_basic_tests"
    assert weather.CONFIG.is_file() and notes.EVALSET.is_file()
    assert load_agent("agentflow_eval.examples.weather.agent:agent").name == "weather_agent"
