"""An evaluate run still going at its timeout stops there, Failed, saying so and how to
finish it; the trials it finished are kept, and a resume finishes the run."""

from __future__ import annotations

import json
from pathlib import Path

from agentflow_eval.flows.evaluate import evaluate

AGENTS = """
import time
from pathlib import Path

RELEASE = Path({release!r})


def agent(message):
    if "slow" in message:
        while not RELEASE.exists():  # held until the test lets it go
            time.sleep(0.05)
    return "Light rain."
"""


def _held_run(tmp_path: Path, eval_set_id: str, cases: list[str]) -> tuple[Path, Path, Path]:
    """The agent's file, an eval set of ``cases`` (those named slow are held until the
    release file exists) and that release file's path."""
    release = tmp_path / "release"
    agents = tmp_path / "timeout_agents.py"
    agents.write_text(AGENTS.format(release=str(release)))
    evalset = tmp_path / f"{eval_set_id}.evalset.json"
    body = {
        "eval_set_id": eval_set_id,
        "eval_cases": [
            {
                "eval_id": case_id,
                "conversation": [{"user_content": f"{case_id}?"}],
                "expectations": [{"final_contains": "rain"}],
            }
            for case_id in cases
        ],
    }
    evalset.write_text(json.dumps(body))
    return release, agents, evalset


async def test_a_run_still_going_at_its_timeout_fails_saying_so_and_resumes(tmp_path: Path) -> None:
    release, agents, evalset = _held_run(tmp_path, "rain", ["quick", "slow"])
    common = {"agent": f"{agents}:agent", "evalset": str(evalset), "runs": 1}
    try:
        state = await evaluate(
            **common,
            output_dir=str(tmp_path / "out"),
            trial_timeout_s=600,
            timeout_minutes=0.1,  # room for the quick trial on a loaded machine
            return_state=True,
        )
    finally:
        release.touch()
    assert state.is_failed()
    assert "the run did not finish within 0.1 min (timeout_minutes)" in state.message
    (run_dir,) = (tmp_path / "out" / "rain").iterdir()
    assert f"resume={run_dir}" in state.message
    kept = (run_dir / "trials.jsonl").read_text().splitlines()
    assert [json.loads(line)["case_id"] for line in kept] == ["quick"]

    outcome = await evaluate(**common, resume=str(run_dir))
    assert outcome.run.totals.trials == 2 and outcome.run.totals.passed == 2


def test_runs_have_a_deadline_by_default_in_the_flow_and_the_command() -> None:
    from agentflow_eval.models import defaults
    from agentflow_eval.models.request import RunRequest

    schema = evaluate.parameters.model_dump()["properties"]["timeout_minutes"]
    assert schema["default"] == defaults.RUN_TIMEOUT_MINUTES > 0
    assert RunRequest(evalset="x.json").timeout_minutes == defaults.RUN_TIMEOUT_MINUTES
    # inside the suite's wait, so a suite's evaluate run ends itself, resumable
    assert defaults.RUN_TIMEOUT_MINUTES < defaults.SUITE_EVAL_TIMEOUT_MINUTES


def test_the_command_on_prefect_stops_at_its_timeout_in_one_line(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    from agentflow_eval.cli import main

    release, agents, evalset = _held_run(tmp_path, "slow", ["slow"])
    monkeypatch.chdir(tmp_path)
    args = [f"{agents}:agent", str(evalset), "--runs", "1", "--output", "out"]
    try:
        code = main(["run", *args, "--timeout", "600", "--timeout-minutes", "0.05"])
    finally:
        release.touch()
    err = capsys.readouterr().err
    assert code == 3, err
    (run_dir,) = (tmp_path / "out" / "slow").iterdir()
    assert (
        "the run did not finish within 0.05 min (--timeout-minutes); the trials it finished "
        f"are kept: finish it with --resume out/slow/{run_dir.name}"
    ) in err
    assert "Traceback" not in err
