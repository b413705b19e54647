"""Fault matrix, area 4 — a run folder has one owner, and a resume is the same run.

- a second process cannot take a folder another holds, and is told who holds it; the lock
  of a process that died is taken over (with a second process:
  tests/e2e/test_run_folder_owners.py);
- ``--resume`` with another eval set (id, cases added, removed or changed), another
  judging config or other runs per case is refused in one line, the folder untouched;
- a damaged run.json is named.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.cli import main
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.models.config import CriterionConfig
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.run.folder_lock import RunFolderBusy, RunFolderLock
from agentflow_eval.run.plan import ResumeMismatch, RunInputs, RunOptions, plan_run
from agentflow_eval.run.run_json import params_from_run_dir
from tests.support.faults import (
    ANSWER,
    answer_config,
    answer_evalset,
    folder_digest,
    unfinished_run_dir,
)

ROOT = Path(__file__).resolve().parents[3]


def agent(message: str) -> str:
    return ANSWER


AGENT = PythonAgent(agent)


async def finished_run(tmp_path: Path, cases: int = 3, runs: int = 2) -> Path:
    await evaluate(
        AGENT,
        answer_evalset(cases),
        answer_config(),
        runs=runs,
        output_dir=tmp_path,
    )
    [run_dir] = list((tmp_path / "faults").iterdir())
    return run_dir


async def test_a_plan_holds_its_folder_until_released(tmp_path: Path) -> None:
    run_dir = await finished_run(tmp_path)
    inputs = RunInputs.of(answer_evalset(3), answer_config())
    plan = plan_run(inputs, RunOptions(), agent=AGENT, resume=run_dir)
    with pytest.raises(RunFolderBusy):
        plan_run(inputs, RunOptions(), agent=AGENT, resume=run_dir)
    plan.release()
    plan_run(inputs, RunOptions(), agent=AGENT, resume=run_dir).release()


def mismatches() -> list[tuple[str, RunInputs, RunOptions, str]]:
    other_id = answer_evalset(3, eval_set_id="another")
    more = answer_evalset(5)
    fewer = answer_evalset(2)
    changed = answer_evalset(3).model_dump(mode="json")
    changed["eval_cases"][1]["conversation"][0]["expected_final_response"] = "forty-two"
    from agentflow_eval.models.evalset import EvalSet

    strict = answer_config()
    strict.criteria["response_match_score"] = CriterionConfig(threshold=1.0)
    judged = answer_config()
    judged.judge.model = "openai/another-judge"
    return [
        (
            "eval set id",
            RunInputs.of(other_id, answer_config()),
            RunOptions(),
            "its eval set is 'faults', not 'another'",
        ),
        (
            "cases added",
            RunInputs.of(more, answer_config()),
            RunOptions(),
            "2 cases added ('c03', 'c04')",
        ),
        (
            "cases removed",
            RunInputs.of(fewer, answer_config()),
            RunOptions(),
            "1 case removed ('c02')",
        ),
        (
            "case changed",
            RunInputs.of(EvalSet.model_validate(changed), answer_config()),
            RunOptions(),
            "1 case changed ('c01')",
        ),
        (
            "criteria",
            RunInputs.of(answer_evalset(3), strict),
            RunOptions(),
            "its config differs in criteria",
        ),
        (
            "judge model",
            RunInputs.of(answer_evalset(3), judged),
            RunOptions(),
            "its config differs in judge",
        ),
        (
            "runs",
            RunInputs.of(answer_evalset(3), answer_config()),
            RunOptions(runs=5),
            "it runs each case 2 times, this resume asks for 5",
        ),
    ]


@pytest.mark.parametrize(
    ("what", "inputs", "options", "says"),
    mismatches(),
    ids=lambda v: v if isinstance(v, str) else "",
)
async def test_a_resume_with_other_inputs_is_refused_and_the_folder_kept(
    tmp_path: Path, what: str, inputs: RunInputs, options: RunOptions, says: str
) -> None:
    run_dir = await finished_run(tmp_path)
    before = folder_digest(run_dir)
    with pytest.raises(ResumeMismatch) as refused:
        plan_run(inputs, options, agent=AGENT, resume=run_dir)
    assert says in str(refused.value) and "\n" not in str(refused.value)
    assert folder_digest(run_dir) == before
    RunFolderLock.acquire(run_dir).release()  # and it was let go


async def test_operational_settings_may_change_on_resume(tmp_path: Path) -> None:
    run_dir = await finished_run(tmp_path)
    config = answer_config(max_concurrency=3, trial_timeout_s=9)
    config.judge.max_concurrency = 2
    with plan_run(
        RunInputs.of(answer_evalset(3), config), RunOptions(runs=2), agent=AGENT, resume=run_dir
    ) as run:
        plan = run.plan
    assert plan.settings.max_concurrency == 3 and plan.runs == 2


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "invalid JSON at line 1, column 2"),
        ("[1, 2]", "expected a JSON object"),
        ('{"run_id": "x"}', "has no 'started_at'"),
        ('{"run_id": "x", "started_at": "yesterday"}', "'started_at' is not a date"),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_a_damaged_run_json_is_named(tmp_path: Path, content: str | bytes, says: str) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(EvalFileError) as error:
        params_from_run_dir(tmp_path)
    assert str(error.value).startswith(f"{path}: ") and says in str(error.value)


async def test_the_cli_refuses_a_resume_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI checks before starting anything: other runs per case, a damaged run.json
    — exit 2, one line each. (A folder another process holds:
    tests/e2e/test_run_folder_owners.py.)"""
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # no server is started
    run_dir = unfinished_run_dir(tmp_path, "tests.unit.reliability.test_faults_run_folder:agent")
    monkeypatch.chdir(ROOT)

    assert main(["run", "--resume", str(run_dir), "--runs", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "runs each case 2 times, this resume asks for 3" in err

    (run_dir / "run.json").write_text("{broken", encoding="utf-8")
    assert main(["run", "--resume", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(run_dir / "run.json") in err
