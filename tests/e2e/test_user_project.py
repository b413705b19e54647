"""agentflow-eval as a user meets it: installed with pip into a fresh virtualenv of a
project outside this repository.

One virtualenv per test session (pip's cache is reused): the README's walk-through
"Your first eval set in five minutes" creates it — every block of that section is run
as written, the install command pointed at a copy of this checkout — and its "From
pytest" section runs in the same project. The distribution pip built and installed there
is the one checked for what it claims. A second project then uses the pytest plugin
as a user would: async tests with no pytest-asyncio installed, the --agentflow-* options,
and a failing evaluation shown case by case.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.markdown_doc import DocRun, blocks_of, section, venv_env

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
_NOT_SOURCES = (".git", ".venv", "build", "eval-results", "*.egg-info", "__pycache__", ".*cache")


@dataclass
class UserProject:
    path: Path
    env: dict[str, str]
    failure: BaseException | None
    done: list[str]

    @property
    def python(self) -> Path:
        return self.path / ".venv" / "bin" / "python"


def _user_environment(project: Path, shell_bin: Path) -> dict[str, str]:
    """The user's shell: no trace of this repository's virtualenv or test settings, the
    project's own .venv activated once it exists (as `source .venv/bin/activate` does).
    Its ``python3`` is the Python these tests run on (``shell_bin`` holds the link), so
    the walk-through is tested on the interpreter the rest of the suite is."""
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PREFECT_", "AGENTFLOW_", "PYTEST_"))
        and key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    }
    repo_bin = str(ROOT / ".venv" / "bin")
    shell_bin.mkdir(parents=True, exist_ok=True)
    (shell_bin / "python3").symlink_to(Path(sys._base_executable).resolve())
    base["PATH"] = os.pathsep.join(
        [str(shell_bin)]
        + [entry for entry in base.get("PATH", "").split(os.pathsep) if entry != repo_bin]
    )
    env = venv_env(project / ".venv", base)
    env.update(PREFECT_HOME=str(project / ".prefect"), COLUMNS="100", NO_COLOR="1")
    return env


@pytest.fixture(scope="session")
def user_project(tmp_path_factory: pytest.TempPathFactory) -> UserProject:
    """The README walk-through, run once: a fresh project with agentflow-eval installed."""
    source = tmp_path_factory.mktemp("checkout") / "agentflow-eval"
    # pip builds in the source folder (build/, *.egg-info): give it a copy
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*_NOT_SOURCES))
    project = tmp_path_factory.mktemp("my-agent")
    env = _user_environment(project, tmp_path_factory.mktemp("shell") / "bin")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = blocks_of(section(readme, "## Your first eval set in five minutes"))
    blocks += blocks_of(section(readme, "### From pytest"))
    run = DocRun(project, env, fields={"repo": str(source)}, timeout_s=1200)
    failure: BaseException | None = None
    try:
        run.run(blocks)
    except BaseException as exc:  # reported by the tests that need the project
        failure = exc
    return UserProject(project, env, failure, run.done)


def test_the_readme_walkthrough_runs_in_a_fresh_project(user_project: UserProject) -> None:
    if user_project.failure is not None:
        raise user_project.failure
    assert any(step.startswith("compared") for step in user_project.done)
    assert user_project.python.exists()
    assert ROOT not in user_project.path.parents  # outside this repository
    reports = list((user_project.path / "eval-results" / "orders").glob("*/report.html"))
    assert reports, "the walkthrough's run wrote its report"
    assert list((user_project.path / "test-results").glob("*/*/report.html"))


def test_the_installed_distribution_has_one_top_level_name(user_project: UserProject) -> None:
    """The wheel pip built from the checkout and installed: it claims only the project's
    own top-level name (flows/ and tasks/ install as ``agentflow_eval.flows`` and
    ``agentflow_eval.tasks``), with the package data beside the code. (What
    pyproject.toml lists: tests/unit/test_packaging.py.)"""
    if not user_project.python.exists():
        pytest.fail(f"the walkthrough did not make the virtualenv: {user_project.failure}")
    (record,) = (user_project.path / ".venv").glob(
        "lib/python*/site-packages/agentflow_eval-*.dist-info/RECORD"
    )
    names = [line.split(",", 1)[0] for line in record.read_text().splitlines() if line]
    # the command pip wrote into .venv/bin is no importable name
    tops = {name.split("/", 1)[0] for name in names if not name.startswith("../")}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"agentflow_eval"}
    assert "agentflow_eval/flows/evaluate.py" in names
    assert "agentflow_eval/tasks/run_trials.py" in names
    assert "agentflow_eval/examples/weather/weather.evalset.json" in names
    assert any(n.startswith("agentflow_eval/criteria/judges/prompts/") for n in names)
    assert any(n.startswith("agentflow_eval/report/templates/") for n in names)


PLUGIN_AGENT = """
def agent(message: str, recorder) -> str:
    for city in ("Rome", "Oslo"):
        if city in message:
            with recorder.tool("forecast", {"city": city}) as call:
                call.result = "sunny"
            return f"{city}: sunny."
    return "Which city?"
"""

PLUGIN_EVALSET = """{
  "eval_set_id": "forecasts",
  "eval_cases": [
    {"eval_id": "rome", "conversation": [{"user_content": "Rome tomorrow?",
      "expected_tool_trajectory": [{"name": "forecast", "args": {"city": "Rome"}}]}]},
    {"eval_id": "oslo_and_rome", "conversation": [{"user_content": "Oslo and Rome?",
      "expected_tool_trajectory": [{"name": "forecast", "args": {"city": "Oslo"}},
                                   {"name": "forecast", "args": {"city": "Rome"}}]}]}
  ]
}
"""

PLUGIN_TESTS = """
import pytest

from agentflow_eval import AgentEvaluator

CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0}}


@pytest.mark.agentflow
async def test_forecasts_hold_up():
    await AgentEvaluator.evaluate_file(
        "forecast_agent.py:agent", "forecasts.evalset.json", CONFIG, min_pass_rate=0.9
    )


async def test_rome_alone(agent_evaluator, agentflow_settings):
    run = await agent_evaluator("forecast_agent.py:agent", CONFIG).evaluate(
        "forecasts.evalset.json", min_pass_rate=0.0
    )
    assert run.runs_per_case == agentflow_settings.values["runs"] == 2
"""


def test_the_plugin_in_a_project_of_ones_own(
    user_project: UserProject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if not user_project.python.exists():
        pytest.fail(f"the walkthrough did not make the virtualenv: {user_project.failure}")
    project = tmp_path_factory.mktemp("forecast-project")
    (project / "forecast_agent.py").write_text(PLUGIN_AGENT, encoding="utf-8")
    (project / "forecasts.evalset.json").write_text(PLUGIN_EVALSET, encoding="utf-8")
    (project / "tests").mkdir()
    (project / "tests" / "test_forecasts.py").write_text(PLUGIN_TESTS, encoding="utf-8")
    installed = subprocess.run(
        [str(user_project.python), "-m", "pip", "show", "pytest-asyncio"],
        capture_output=True,
        text=True,
        env=user_project.env,
    )
    assert installed.returncode != 0, "the user's project has no pytest-asyncio"

    result = subprocess.run(
        [
            *(str(user_project.python), "-m", "pytest", "-p", "no:cacheprovider", "tests"),
            *("--agentflow-runs", "2", "--agentflow-output", "reports"),
        ],
        capture_output=True,
        text=True,
        cwd=project,
        env=user_project.env,
        timeout=600,
    )
    out = result.stdout
    assert result.returncode == 1, out[-4000:] + result.stderr[-2000:]
    assert "1 failed, 1 passed" in out
    assert "async def functions are not natively supported" not in out
    failure = out[out.index("test_forecasts_hold_up") :]
    assert "forecasts: pass rate 50% (2 of 4 trials) is below min_pass_rate 90%" in failure
    assert "oslo_and_rome: 0/2 passed  [FAILED: trajectory EXACT (2 trials)]" in failure
    assert '  expected   forecast(city="Oslo") → forecast(city="Rome")' in failure
    assert '    actual     forecast(city="Rome")' in failure
    assert (
        "  trials 1, 2: failed: trajectory EXACT 0.00 (invocation 1: 0/2 expected call(s) "
        "matched among 1 made; EXACT needs 2 call(s), the agent made 1)"
    ) in failure
    assert "Traceback" not in failure
    report = Path(re.search(r"report: (\S+report\.html)", failure).group(1))
    assert report.is_file() and report.is_relative_to(project / "reports")
    assert re.search(r"test_rome_alone: forecasts 2/4 passed \(50%\) · report .*reports/", out)
