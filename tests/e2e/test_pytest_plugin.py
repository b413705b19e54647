"""The pytest plugin, in a pytest run of its own (``pytester``, a subprocess with no
pytest-asyncio mode set): async evaluation tests run without settings, the options reach
every evaluation, a failing evaluation shows its cases compactly, and the summary says
where each report is. (tests/e2e/test_user_project.py checks the same from a project
that installed agentflow-eval as a user would.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

AGENT = """
def agent(message: str, recorder) -> str:
    if "Paris" in message:
        return "No idea."
    with recorder.tool("lookup", {"city": "Rome"}) as call:
        call.result = "sunny"
    return "Rome is sunny."
"""

EVALSET = {
    "eval_set_id": "cities",
    "eval_cases": [
        {
            "eval_id": "rome",
            "conversation": [
                {
                    "user_content": "Weather in Rome?",
                    "expected_tool_trajectory": [{"name": "lookup", "args": {"city": "Rome"}}],
                }
            ],
        },
        {
            "eval_id": "paris",
            "conversation": [
                {
                    "user_content": "Weather in Paris?",
                    "expected_tool_trajectory": [{"name": "lookup", "args": {"city": "Paris"}}],
                }
            ],
        },
    ],
}

CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0}}

TESTS = """
import pytest
from agentflow_eval import AgentEvaluator


@pytest.mark.agentflow
async def test_rome_passes():
    evaluator = AgentEvaluator("my_agent.py:agent", "config.json")
    run = await evaluator.evaluate("rome.evalset.json", min_pass_rate=1.0)
    assert run.runs_per_case == RUNS


async def test_with_the_fixture(agent_evaluator, agentflow_settings):
    evaluator = agent_evaluator("my_agent.py:agent", "config.json")
    run = await evaluator.evaluate("rome.evalset.json")
    assert agentflow_settings.values["runs"] == RUNS and run.runs_per_case == RUNS


@pytest.mark.agentflow
async def test_cities_fall_short():
    await AgentEvaluator.evaluate_file(
        "my_agent.py:agent", "cities.evalset.json", "config.json", min_pass_rate=0.9
    )
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(my_agent=AGENT)
    (pytester.path / "cities.evalset.json").write_text(json.dumps(EVALSET))
    rome = {**EVALSET, "eval_cases": EVALSET["eval_cases"][:1]}
    (pytester.path / "rome.evalset.json").write_text(json.dumps(rome))
    (pytester.path / "config.json").write_text(json.dumps(CONFIG))
    pytester.makepyfile(test_agent=TESTS.replace("RUNS", "2"))
    return pytester


def test_async_evaluations_run_and_a_failure_shows_the_cases(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess(
        "-p", "no:asyncio", "--agentflow-runs", "2", "--agentflow-output", "reports"
    )
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "async def functions are not natively supported" not in out
    failure = out[out.index("test_cities_fall_short") :]
    assert "cities: pass rate 50% (2 of 4 trials) is below min_pass_rate 90%" in failure
    assert "paris: 0/2 passed  [FAILED: trajectory EXACT (2 trials)]" in failure
    assert '  expected   lookup(city="Paris")' in failure
    assert "  trials 1, 2: failed: trajectory EXACT 0.00" in failure  # numbered from 1
    assert "    actual     (no tool calls)" in failure
    assert "Traceback" not in failure and "def test_cities_fall_short" not in failure
    report = re.search(r"report: (\S+report\.html)", failure)
    assert report and Path(report.group(1)).is_file()
    assert Path(report.group(1)).is_relative_to(project.path / "reports")
    # the summary names each evaluation test's report
    summary = out[out.index("agentflow-eval") :]
    assert re.search(
        r"test_agent\.py::test_rome_passes: cities 2/2 passed \(100%\) · report ", summary
    )
    assert "test_with_the_fixture" in summary


def test_without_options_runs_keep_their_own_settings(project: pytest.Pytester) -> None:
    project.makepyfile(test_agent=TESTS.replace("RUNS", "5"))  # the default: 5 runs
    result = project.runpytest_subprocess("-p", "no:asyncio", "-k", "rome")
    result.assert_outcomes(passed=1)
    assert list((project.path / "eval-results" / "cities").glob("*/report.html"))


def test_the_options_are_listed_in_help(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("--help")
    for option in (
        "--agentflow-runs=N",
        "--agentflow-max-concurrency=N",
        "--agentflow-trial-timeout-s=SECONDS",
        "--agentflow-judge-model=MODEL",
        "--agentflow-output-dir=DIR",
        "--agentflow-output=DIR",
    ):
        assert option in result.stdout.str()
    markers = project.runpytest_subprocess("--markers").stdout.str()
    assert "@pytest.mark.agentflow: an agent evaluation" in markers


def test_a_bad_option_value_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("--agentflow-runs", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--agentflow-runs" in result.stderr.str()


@pytest.mark.parametrize("mode", ["auto", "strict"])
def test_it_gets_along_with_pytest_asyncio(project: pytest.Pytester, mode: str) -> None:
    result = project.runpytest_subprocess(
        "-o", f"asyncio_mode={mode}", "-k", "rome or fixture", "--agentflow-runs", "2"
    )
    result.assert_outcomes(passed=2)
    assert "not natively supported" not in result.stdout.str()


LOADED_AT_THE_END = """
import json
import sys


def pytest_sessionfinish(session):
    names = sorted(
        name
        for name in sys.modules
        if name.split(".")[0] in ("agentflow_eval", "litellm", "scipy", "prefect")
    )
    with open("loaded.json", "w") as out:
        json.dump(names, out)
"""

FAILING_TESTS = """
import pytest


def test_an_assertion_fails():
    assert 1 == 2


def test_an_error_is_raised():
    raise ValueError("not an evaluation")


@pytest.fixture
def broken():
    raise RuntimeError("a fixture failed")


def test_a_fixture_fails(broken):
    pass
"""


def test_a_session_without_evaluations_loads_nothing_of_ours(pytester: pytest.Pytester) -> None:
    """Installed, the plugin loads in every pytest session of every project: there, with
    tests that fail and no evaluation, nothing of agentflow-eval but the plugin itself
    (and its package) is imported, let alone LiteLLM or SciPy."""
    pytester.makeconftest(LOADED_AT_THE_END)
    pytester.makepyfile(test_other=FAILING_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(failed=2, errors=1)
    loaded = json.loads((pytester.path / "loaded.json").read_text())
    assert loaded == ["agentflow_eval", "agentflow_eval.pytest_plugin"]


def test_the_options_still_reach_an_evaluation_imported_inside_a_test(
    project: pytest.Pytester,
) -> None:
    """An evaluation the session did not see coming (no marker, no fixture, the evaluator
    imported inside the test) still gets the session's ``--agentflow-*`` settings."""
    project.makepyfile(
        test_agent="""
import asyncio


def test_plain():
    from agentflow_eval import AgentEvaluator

    evaluator = AgentEvaluator("my_agent.py:agent", "config.json")
    run = asyncio.run(evaluator.evaluate("rome.evalset.json"))
    assert run.runs_per_case == 2
"""
    )
    result = project.runpytest_subprocess("-p", "no:asyncio", "--agentflow-runs", "2")
    result.assert_outcomes(passed=1)
