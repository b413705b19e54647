"""A starter project written into a folder: an agent with one tool that runs offline on
the demo model, an eval set with a case of each kind (a final answer, a tool
trajectory, a conversation of two turns), its config, a pytest test through the plugin,
and a README. Nothing is overwritten: when any of its files exists, nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentflow_eval.errors import InputError
from agentflow_eval.files.atomic import write_text_atomically

__all__ = ["STARTER_FILES", "StarterExists", "write_starter"]


class StarterExists(InputError, FileExistsError):
    """A file the starter project would write is already there."""


AGENT = '''"""A starter agent: a LiteLLM tool agent with one tool, ``get_weather``.

It runs offline on agentflow-eval's demo model (``agentflow-demo/starter``: a seeded,
imperfect stand-in for an LLM, not a real one). Evaluate it on a real model with
``--model openai/gpt-4o-mini`` (and that provider's API key set). Replace the tool and
the prompt with your agent's own.
"""

from __future__ import annotations

from agentflow_eval.agents.litellm_agent import LiteLLMAgent

WEATHER = {
    "paris": {"city": "Paris", "condition": "rainy", "temperature": 61, "unit": "°F"},
    "tokyo": {"city": "Tokyo", "condition": "sunny", "temperature": 75, "unit": "°F"},
    "london": {"city": "London", "condition": "cloudy", "temperature": 55, "unit": "°F"},
}


def get_weather(location: str) -> dict[str, object]:
    """Get the current weather for a city.

    Args:
        location: The city to look up, e.g. "Paris".
    """
    report = WEATHER.get(location.strip().lower())
    if report is None:
        return {"error": f"no weather data for {location!r}"}
    return report


agent = LiteLLMAgent(
    model="agentflow-demo/starter",
    system_prompt=(
        "You are a weather assistant. Call get_weather once for every city the user "
        "names and answer from its results only, in one or two short sentences."
    ),
    tools=[get_weather],
    name="starter_agent",
)
'''

EVALSET = """{
  "eval_set_id": "starter",
  "name": "Starter cases",
  "eval_cases": [
    {
      "eval_id": "final_answer",
      "conversation": [
        {
          "user_content": "What's the weather in Paris?",
          "expected_final_response": "The weather in Paris is rainy with a temperature of 61°F."
        }
      ]
    },
    {
      "eval_id": "tool_trajectory",
      "conversation": [
        {
          "user_content": "Compare the weather in Tokyo and London.",
          "expected_tool_trajectory": [
            {"name": "get_weather", "args": {"location": "Tokyo"}},
            {"name": "get_weather", "args": {"location": "London"}}
          ]
        }
      ]
    },
    {
      "eval_id": "multi_turn",
      "conversation": [
        {
          "user_content": "What's the weather in Tokyo?",
          "expected_tool_trajectory": [{"name": "get_weather", "args": {"location": "Tokyo"}}]
        },
        {
          "user_content": "And in London?",
          "expected_tool_trajectory": [{"name": "get_weather", "args": {"location": "London"}}],
          "expected_final_response": "The weather in London is cloudy with a temperature of 55°F."
        }
      ]
    }
  ]
}
"""

CONFIG = """{
  "criteria": {
    "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"},
    "response_match_score": {"threshold": 0.6}
  },
  "runs": 3
}
"""

PYTEST_TEST = '''"""The starter agent as a test: it fails when the pass rate drops below 60%."""

from pathlib import Path

import pytest

from agentflow_eval import AgentEvaluator

PROJECT = Path(__file__).resolve().parents[1]


@pytest.mark.agentflow
async def test_starter_agent() -> None:
    await AgentEvaluator.evaluate_file(
        f"{PROJECT / 'agent.py'}:agent",
        PROJECT / "evals" / "starter.evalset.json",
        min_pass_rate=0.6,
    )
'''

README = """# Starter agent evaluation

Made by `agentflow-eval init`. `agent.py` is a weather agent with one tool; it runs
offline on agentflow-eval's demo model (a seeded, imperfect stand-in for an LLM, so its
scores show how the evaluation works, not how good a real agent is).
`evals/starter.evalset.json` holds a case of each kind: a final answer checked against a
reference, a tool trajectory, and a conversation of two turns; `evals/test_config.json`
(read because it sits beside the eval set) says how each is judged and runs every case
3 times. Evaluate the agent with
`agentflow-eval run agent.py:agent evals/starter.evalset.json` (add `--verbose` for why
each failing trial failed, `--model openai/gpt-4o-mini` for a real model), or as a test
with `pytest tests`; reports land under `eval-results/`.
"""


@dataclass(frozen=True)
class StarterFile:
    path: str
    """Where it goes, relative to the project folder."""
    text: str


STARTER_FILES: tuple[StarterFile, ...] = (
    StarterFile("agent.py", AGENT),
    StarterFile("evals/starter.evalset.json", EVALSET),
    StarterFile("evals/test_config.json", CONFIG),
    StarterFile("tests/test_starter_agent.py", PYTEST_TEST),
    StarterFile("README.md", README),
)


def write_starter(folder: Path) -> list[Path]:
    """Write the starter project into ``folder`` (made if missing); the paths written.
    Raises :class:`StarterExists`, writing nothing, when any of its files exists (or
    ``folder`` is a file)."""
    if folder.exists() and not folder.is_dir():
        raise StarterExists(f"{folder}: exists and is not a folder")
    targets = [folder / item.path for item in STARTER_FILES]
    existing = [path for path in targets if path.exists() or path.is_symlink()]
    if existing:
        raise StarterExists(
            f"{existing[0]}: already exists; init writes only into a folder without "
            f"{', '.join(item.path for item in STARTER_FILES)}"
        )
    for item, path in zip(STARTER_FILES, targets, strict=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(path, [item.text])
    return targets
