"""One run request, whatever door builds it: the same settings given to the CLI (with
and without Prefect), ``AgentEvaluator``, ``agentflow_eval.evaluate()``, the pytest
plugin's options and the evaluate flow's parameters make equal requests. Each door runs
for real; the request each one made is the one its run folder records (run.json)."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval import AgentEvaluator, evaluate
from agentflow_eval.cli import main
from agentflow_eval.cli.commands import build_parser
from agentflow_eval.cli.run import RUN_FLAGS
from agentflow_eval.flows.evaluate import evaluate as evaluate_flow
from agentflow_eval.models.request import RunRequest, S3Options, flag_of
from agentflow_eval.pytest_plugin import SESSION_OPTIONS

ROOT = Path(__file__).resolve().parents[2]
AGENT = "examples.weather.agent:agent"
EVALSET = str(ROOT / "examples/weather/weather.evalset.json")
CONFIG = str(ROOT / "examples/weather/eval_config.json")

# the same settings, by their one name
SETTINGS: dict[str, Any] = {
    "runs": 2,
    "max_concurrency": 3,
    "trial_timeout_s": 30.0,
    "judge_model": "agentflow-demo/judge",
    "min_pass_rate": 0.1,
    "track": "doors",
    "labels": {"door": "any"},
    "max_cost_increase": 0.1,
    "timeout_minutes": 20.0,
}


def _recorded(output: Path) -> list[RunRequest]:
    """The requests the run folders under ``output`` record."""
    found = sorted(output.glob("*/*/run.json"))
    assert found, f"no run under {output}"
    return [RunRequest.model_validate(json.loads(p.read_text())["params"]) for p in found]


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", [str(ROOT), *sys.path])
    for name in ("AGENTFLOW_AGENT_VERSION", "AGENTFLOW_GIT_SHA", "GITHUB_SHA", "CI_COMMIT_SHA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTFLOW_GIT_SHA", "0123abc")  # every door reads it alike


@pytest.mark.usefixtures("in_root")
def test_every_door_builds_the_same_request(tmp_path: Path) -> None:
    output = tmp_path / "out"
    out = str(output)
    expected = RunRequest(agent=AGENT, evalset=EVALSET, config=CONFIG, output_dir=out,
                          git_sha="0123abc", **SETTINGS)  # fmt: skip

    flags = [
        "run", AGENT, EVALSET, "--config", CONFIG, "--runs", "2", "--max-concurrency", "3",
        "--timeout", "30", "--judge-model", "agentflow-demo/judge", "--fail-under", "10%",
        "--track", "doors", "--label", "door=any", "--max-cost-increase", "10%",
        "--timeout-minutes", "20", "--output", out, "-q",
    ]  # fmt: skip
    assert main([*flags, "--no-prefect"]) == 0
    assert _recorded(output) == [expected]

    shutil.rmtree(output)
    doors = {
        "CLI through the flow": lambda: _succeeded(main(flags)),
        "evaluate()": lambda: asyncio.run(
            evaluate(AGENT, EVALSET, CONFIG, output_dir=out, **SETTINGS)
        ),
        "AgentEvaluator": lambda: asyncio.run(
            AgentEvaluator(AGENT, CONFIG, output_dir=out).evaluate(EVALSET, **SETTINGS)
        ),
        "the flow's parameters": lambda: asyncio.run(
            evaluate_flow(**expected.updated(git_sha=None).flow_parameters())
        ),
    }
    for door, run in doors.items():
        run()
        assert _recorded(output) == [expected], door
        shutil.rmtree(output)

    # the pytest plugin's options over a test's own settings
    test_file = tmp_path / "test_door.py"
    test_file.write_text(
        textwrap.dedent(
            f"""
            from agentflow_eval import AgentEvaluator

            async def test_door(agentflow_settings):
                await AgentEvaluator({AGENT!r}, {CONFIG!r}).evaluate(
                    {EVALSET!r}, min_pass_rate=0.1, track="doors", labels={{"door": "any"}},
                    max_cost_increase="10%", timeout_minutes=20, runs=5,
                )
            """
        )
    )
    options = [
        str(test_file), "-q", "-p", "no:cacheprovider", "-p", "no:asyncio",
        "--agentflow-runs", "2", "--agentflow-max-concurrency", "3",
        "--agentflow-trial-timeout-s", "30", "--agentflow-judge-model",
        "agentflow-demo/judge", "--agentflow-output-dir", out,
    ]  # fmt: skip
    assert pytest.main(options) == 0
    assert _recorded(output) == [expected]


def _succeeded(code: int) -> None:
    assert code == 0


def test_each_setting_has_one_name_at_every_door() -> None:
    """A request field is the flow's parameter of its name, the CLI's flag of its name
    (``--`` and dashes; older spellings after it), the pytest plugin's option of its name
    behind ``agentflow-``, and a keyword of ``AgentEvaluator`` and ``evaluate()``."""
    parser = build_parser()
    run = parser._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    by_dest = {action.dest: action.option_strings for action in run._actions}
    flagged = [name for name in RunRequest.model_fields if flag_of(RunRequest, name)]
    for name in flagged:
        derived = "--" + name.replace("_", "-")
        assert by_dest[name][0] == derived, name
    for option in S3Options.model_fields:
        if flag_of(S3Options, option):
            assert by_dest[f"s3_{option}"][0] == "--s3-" + option.replace("_", "-")
    # every flagged field is one of run's flags; the others are the flow's alone
    assert set(flagged) == set(RUN_FLAGS) - {"s3"}
    prefect_only = set(RunRequest.model_fields) - set(flagged)
    assert prefect_only == {
        "agent", "evalset", "rejudge_from", "s3", "secrets", "shards", "shared_storage",
        "shard", "allowed_agents",
    }  # fmt: skip
    assert set(SESSION_OPTIONS) <= set(RunRequest.model_fields)
    # the config file's run settings are the request's, by the same names
    from agentflow_eval.models.config import EvalConfig

    shared = {"runs", "max_concurrency", "trial_timeout_s"}
    assert shared <= set(EvalConfig.model_fields) & set(RunRequest.model_fields)
