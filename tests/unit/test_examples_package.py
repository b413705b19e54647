"""The examples ship inside the package (``agentflow_eval.examples``): importable from
any project, their files beside them, and copied into a folder of one's own with
``python -m agentflow_eval.examples NAME DIR``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agentflow_eval.agents.loader import load_agent
from agentflow_eval.examples import notes, weather
from agentflow_eval.files.loading import load_evalset


def test_the_examples_and_their_files_are_importable_from_the_package() -> None:
    assert load_evalset(weather.EVALSET).eval_set.eval_set_id == "weather_agent_basic_tests"
    assert weather.CONFIG.is_file() and notes.EVALSET.is_file()
    assert load_agent("agentflow_eval.examples.weather.agent:agent").name == "weather_agent"


def test_an_example_is_copied_into_a_folder_of_ones_own(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    result = subprocess.run(
        [sys.executable, "-m", "agentflow_eval.examples", "weather", str(target)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in target.iterdir()) == [
        "agent.py",
        "eval_config.json",
        "weather.evalset.json",
    ]
    assert f"agentflow-eval run {target / 'agent.py'}:agent" in result.stdout
    assert load_agent(f"{target / 'agent.py'}:agent").name == "weather_agent"
    again = subprocess.run(
        [sys.executable, "-m", "agentflow_eval.examples", "weather", str(target)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 2 and "exists and is not empty" in again.stderr
    unknown = subprocess.run(
        [sys.executable, "-m", "agentflow_eval.examples", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert unknown.returncode == 2 and unknown.stderr.startswith("usage:")
