"""The commands in processes of their own, as a shell meets them: bad flags and bad input
are one line on stderr with exit 2 (no usage dump, no traceback, nothing else the process
prints); ``compare``'s exit code and JSON; ``python -m agentflow_eval.examples`` copying
an example into a folder of one's own. (The same checks in the test's own process:
tests/unit/cli/test_flags.py, tests/unit/compare/test_compare_cli.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.sample_results import sample_run, write_run_dir

from agentflow_eval.agents.loader import load_agent
from agentflow_eval.publish.publisher import run_folder
from tests.support.prefect_server import PrefectServer

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EVALSET = str(ROOT / "examples/weather/weather.evalset.json")
AGENT = "examples.weather.agent:agent"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentflow_eval.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )


def test_every_subcommand_reports_usage_errors_in_one_line() -> None:
    for args in (["run", "--bogus"], ["report"], ["publish"], ["frobnicate"]):
        result = cli(*args)
        assert result.returncode == 2
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert "(see agentflow-eval" in result.stderr


def test_a_bad_flag_value_and_bad_input_are_one_line(
    tmp_path: Path, shared_prefect: PrefectServer
) -> None:
    result = cli("run", AGENT, EVALSET, "--runs", "0")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "agentflow-eval run: error: argument --runs: must be at least 1, got 0 "
        "(see agentflow-eval run --help)"
    ]
    env = {**os.environ, "PREFECT_API_URL": shared_prefect.api_url}
    out = tmp_path / "o"
    result = cli("run", AGENT, EVALSET, "--case", "hotel_*", "--output", str(out), env=env)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "agentflow-eval: error: no case of eval set 'weather_agent_basic_tests' matches "
        "'hotel_*'; its cases: weather_lookup_simple, weather_lookup_multi_city"
    ]
    assert not out.exists()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A baseline and a candidate run folder; the candidate's agent calls the wrong tool
    in one case that always passed."""
    root = tmp_path_factory.mktemp("runs")
    baseline, _eval_set = sample_run(trials=10, run_id="base")
    candidate, _ = sample_run(
        trials=10, run_id="cand", behaviour_of={"weather_lookup_simple": "wrong_tool"}
    )
    return (
        write_run_dir(root / run_folder(baseline), baseline),
        write_run_dir(root / "candidate", candidate),
    )


def test_the_installed_compare_command(runs: tuple[Path, Path]) -> None:
    baseline, candidate = runs
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentflow_eval.cli",
            "compare",
            str(baseline),
            str(candidate),
            "--json",
            "--fail-on-regression",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["regressed"] is True


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
