"""AgentEvaluator: the pytest front door, on the same stages as the CLI and the flow."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentflow_eval.evaluator import (
    AgentEvaluator,
    EvalInputWarning,
    EvaluationFailed,
    RegressionFound,
)

ROOT = Path(__file__).resolve().parents[3]
EVALSET = ROOT / "examples/weather/weather.evalset.json"
TRAJECTORY_ONLY = {"criteria": {"tool_trajectory_avg_score": {"match_type": "IN_ORDER"}}}


async def test_evaluate_file_passes_when_the_rate_is_met(tmp_path):
    run = await AgentEvaluator.evaluate_file(
        "examples.weather.agent:agent",
        EVALSET,
        TRAJECTORY_ONLY,
        min_pass_rate=0.5,
        runs=4,
        output_dir=tmp_path,
    )
    assert run.totals.trials == 8
    assert run.totals.pass_rate >= 0.5
    assert run.simulated and run.agent_model == "agentflow-demo/weather"
    # the run folder is made under output_dir as the CLI makes it: <eval set>/<time>-<run id>
    (folder,) = tmp_path.glob(f"weather_agent_basic_tests/*-{run.run_id}")
    assert {p.name for p in folder.iterdir()} >= {"results.json", "report.html", "junit.xml"}


async def test_evaluate_file_raises_with_the_scorecard_below_the_rate(tmp_path):
    agent_file = tmp_path / "lazy.py"
    agent_file.write_text("def agent(message):\n    return 'no idea'\n")
    with pytest.raises(EvaluationFailed) as failure:
        await AgentEvaluator.evaluate_file(
            f"{agent_file}:agent", EVALSET, TRAJECTORY_ONLY, runs=2, output_dir=tmp_path / "o"
        )
    message = str(failure.value)
    assert "pass rate 0% (0 of 4 trials) is below min_pass_rate 100%" in message
    assert re.search(r"^weather_lookup_simple: 0/2 passed", message, re.MULTILINE)
    assert re.search(r"^  expected +get_weather\(location=\"New York\"\)$", message, re.MULTILINE)
    # both trials fell short the same way: one line, numbered from 1
    assert re.search(r"^  trials 1, 2: failed: trajectory ", message, re.MULTILINE)
    assert re.search(r"^    actual +\(no tool calls\)$", message, re.MULTILINE)
    assert str(failure.value.run_dir / "report.html") in message
    assert (failure.value.run_dir / "report.html").is_file()
    assert failure.value.run.totals.trials == 4


async def test_input_warnings_reach_the_test_as_warnings(tmp_path):
    evalset = tmp_path / "extra.evalset.json"
    evalset.write_text(
        '{"eval_set_id": "x", "eval_cases": [{"eval_id": "c", "conversation": '
        '[{"user_content": "hi"}], "my_note": "kept"}]}',
        encoding="utf-8",
    )
    agent = tmp_path / "echo.py"
    agent.write_text("def agent(message):\n    return message\n", encoding="utf-8")
    with pytest.warns(EvalInputWarning, match="unknown key 'my_note'"):
        await AgentEvaluator(f"{agent}:agent").evaluate(evalset, runs=1, output_dir=tmp_path)


async def test_the_configs_concurrency_and_timeout_hold_here_as_in_the_cli(tmp_path):
    """The config's max_concurrency and trial_timeout_s, which the CLI and the flow honour,
    hold for AgentEvaluator too: the settings are resolved in one place for every door."""
    peak_file = tmp_path / "peak.txt"
    agent_file = tmp_path / "slow.py"
    agent_file.write_text(
        "import asyncio\n"
        "from pathlib import Path\n"
        "active = 0\n"
        "async def agent(message):\n"
        "    global active\n"
        "    active += 1\n"
        f"    peak = Path({str(peak_file)!r})\n"
        "    seen = int(peak.read_text()) if peak.exists() else 0\n"
        "    peak.write_text(str(max(seen, active)))\n"
        "    try:\n"
        "        await asyncio.sleep(5)\n"
        "    finally:\n"
        "        active -= 1\n"
        "    return 'too late'\n",
        encoding="utf-8",
    )
    config = {**TRAJECTORY_ONLY, "max_concurrency": 1, "trial_timeout_s": 0.3}
    run = await AgentEvaluator.evaluate_file(
        f"{agent_file}:agent", EVALSET, config, runs=2, output_dir=tmp_path / "o", min_pass_rate=0
    )
    assert run.totals.trials == 4 and run.totals.errored == 4
    assert all(t.trial.error is not None and t.trial.error.kind == "timeout" for t in run.trials)
    assert all("0.3" in t.trial.error.message for t in run.trials if t.trial.error)
    assert peak_file.read_text() == "1"  # one trial at a time, as the config says


GOOD_AND_BAD = """
from pathlib import Path


def good(message: str, recorder) -> str:
    with recorder.tool("get_weather", {"location": "New York"}) as call:
        call.result = {"condition": "sunny"}
    return "Sunny in New York."


def bad(message: str) -> str:
    return "no idea"


def agent(message: str, recorder) -> str:
    # one agent, two versions: mode.txt beside it says which ('latest' is the same agent's)
    mode = Path(__file__).with_name("mode.txt").read_text()
    return good(message, recorder) if mode == "good" else bad(message)
"""


async def test_it_compares_with_a_baseline_publishes_and_records_identity(
    tmp_path, monkeypatch: pytest.MonkeyPatch
):
    agents = tmp_path / "agents.py"
    agents.write_text(GOOD_AND_BAD, encoding="utf-8")
    site, out = tmp_path / "site", tmp_path / "out"
    monkeypatch.setenv("GITHUB_SHA", "c0ffee")  # CI variables fill what the test left out
    (tmp_path / "mode.txt").write_text("good")
    first = await AgentEvaluator(f"{agents}:agent", TRAJECTORY_ONLY).evaluate(
        EVALSET, runs=6, output_dir=out, publish_to=site, baseline="latest",
        agent_version="1.0", labels={"team": "weather"},
    )  # fmt: skip
    identity = (first.agent_version, first.git_sha, first.labels)
    assert identity == ("1.0", "c0ffee", {"team": "weather"})
    latest = json.loads((site / first.eval_set_id / "latest.json").read_text())
    assert latest["run_id"] == first.run_id  # published, and the next run's baseline

    (tmp_path / "mode.txt").write_text("bad")  # the regressed version of the same agent
    with pytest.raises(RegressionFound) as found:
        await AgentEvaluator(f"{agents}:agent", TRAJECTORY_ONLY).evaluate(
            EVALSET, runs=6, output_dir=out, publish_to=site, baseline="latest",
            fail_on_regression=True,
        )  # fmt: skip
    record = found.value.record
    assert record.comparison is not None and record.comparison.baseline.run_id == first.run_id
    regressed = {case.case_id for case in record.comparison.cases if case.verdict == "regression"}
    assert regressed == {"weather_lookup_simple"}  # 6/6 -> 0/6; the other never passed
    assert "regressed" in str(found.value)
    assert (found.value.run_dir / "comparison.json").is_file()
    latest = json.loads((site / first.eval_set_id / "latest.json").read_text())
    assert latest["run_id"] == first.run_id  # a regressed run does not become the baseline


async def test_latest_without_a_publish_target_is_refused(tmp_path):
    with pytest.raises(ValueError, match="baseline 'latest' is the last run published"):
        await AgentEvaluator("examples.weather.agent:agent", TRAJECTORY_ONLY).evaluate(
            EVALSET, runs=1, output_dir=tmp_path, baseline="latest"
        )


async def test_junit_xml_holds_cases_to_the_tests_min_pass_rate(tmp_path):
    """``min_pass_rate=0.8`` (a pytest test's bar) is the bar junit.xml records and holds
    each case to, not every trial."""
    agent_file = tmp_path / "lazy.py"
    agent_file.write_text("def agent(message):\n    return 'no idea'\n")
    with pytest.raises(EvaluationFailed) as failure:
        await AgentEvaluator.evaluate_file(
            f"{agent_file}:agent", EVALSET, TRAJECTORY_ONLY, runs=2, output_dir=tmp_path / "o",
            min_pass_rate=0.8,
        )  # fmt: skip
    junit = (failure.value.run_dir / "junit.xml").read_text()
    assert '<property name="min_pass_rate" value="0.8000" />' in junit
    assert "(0%, needs 80%)" in junit and "needs 100%" not in junit
