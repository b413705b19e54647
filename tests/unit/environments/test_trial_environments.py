"""Each trial gets its own environment: set up before the agent starts, handed to it,
torn down after it ends — after an error, a timeout, a cancelled run — and a setup or
teardown that fails is the infrastructure's failure, not the agent's. Nothing leaks
from one trial to the trial running beside it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from environment_targets import COUNTS, connect

from agentflow_eval.agents.base import trial_environment
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.environments.environment import Environment
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.pipeline.evaluate import evaluate

ANSWER = "done"


def evalset(cases: int, environment: Any = None) -> EvalSet:
    data: dict[str, Any] = {
        "eval_set_id": "envs",
        "eval_cases": [
            {"eval_id": f"c{i:03d}", "conversation": [{"user_content": "go"}]} for i in range(cases)
        ],
    }
    if environment is not None:
        data["environment"] = environment
    return EvalSet.model_validate(data)


def config(environment: Any = None) -> EvalConfig:
    return EvalConfig.model_validate(
        {
            "criteria": {"final_contains": CriterionConfig(text=ANSWER)},
            **({"environment": environment} if environment is not None else {}),
        }
    )


def rows_of(path: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return [owner for (owner,) in db.execute("SELECT owner FROM rows ORDER BY rowid")]


async def writes_and_reads(session: Any, environment: Environment | None) -> str:
    """Adds its own row to the trial's database, lets the others run, and answers
    with every row it then sees."""
    assert environment is not None and environment.database is not None
    assert trial_environment() is environment  # what a tool reads, in this trial
    me = f"agent {session.case_id}#{session.trial_index}"
    with contextlib.closing(connect(environment.database)) as db, db:
        db.execute("INSERT INTO rows VALUES (?)", (me,))
    await asyncio.sleep(random.uniform(0, 0.05))
    return json.dumps({"answer": ANSWER, "rows": rows_of(environment.database)})


def leftovers(root: Path) -> list[str]:
    return sorted(path.name for path in root.iterdir())


@pytest.mark.parametrize("function", ["database", "database_sync"])
async def test_200_concurrent_trials_each_see_only_their_own_database(
    tmp_path: Path, function: str
) -> None:
    root = tmp_path / "dbs"
    root.mkdir()
    spec = {"function": f"environment_targets:{function}", "options": {"root": str(root)}}
    run = await evaluate(
        PythonAgent(writes_and_reads),
        evalset(40, environment=spec),
        config(),
        runs=5,
        max_concurrency=200,
        output_dir=tmp_path / "out",
    )
    assert len(run.trials) == 200
    for result in run.trials:
        trial = result.trial
        assert trial.error is None, trial.error
        seen = json.loads(trial.final_response or "")["rows"]
        me = f"{trial.case_id}#{trial.trial_index}"
        assert seen == [f"seed {me}", f"agent {me}"]
        assert result.status == "passed"
    assert COUNTS[(str(root), "setup")] == COUNTS[(str(root), "teardown")] == 200
    assert leftovers(root) == []


def hangs_async(how: str) -> Any:
    async def hung(environment: Environment | None) -> str:
        assert environment is not None
        await asyncio.sleep(60)
        return ANSWER

    def hung_in_a_thread(environment: Environment | None) -> str:
        assert environment is not None
        time.sleep(3)  # abandoned to its thread when the trial times out
        return ANSWER

    return hung if how == "async" else hung_in_a_thread


@pytest.mark.parametrize("how", ["async", "thread"])
async def test_a_hung_agent_is_timed_out_and_its_environment_torn_down(
    tmp_path: Path, how: str
) -> None:
    root = tmp_path / "dbs"
    root.mkdir()
    spec = {"function": "environment_targets:database", "options": {"root": str(root)}}
    started = time.perf_counter()
    run = await evaluate(
        PythonAgent(hangs_async(how), name="hung"),
        evalset(3),
        config(environment=spec),
        runs=2,
        trial_timeout_s=0.5,
        output_dir=tmp_path / "out",
    )
    assert time.perf_counter() - started < 2.5
    assert {r.trial.error.kind for r in run.trials if r.trial.error} == {"timeout"}
    assert len(run.trials) == 6 and all(r.status == "errored" for r in run.trials)
    assert COUNTS[(str(root), "setup")] == COUNTS[(str(root), "teardown")] == 6
    assert leftovers(root) == []


async def test_cancelling_the_run_tears_down_every_environment(tmp_path: Path) -> None:
    root = tmp_path / "dbs"
    root.mkdir()
    spec = {"function": "environment_targets:database_sync", "options": {"root": str(root)}}
    entered = 0

    async def waits(environment: Environment | None) -> str:
        nonlocal entered
        entered += 1
        await asyncio.sleep(60)
        return ANSWER

    run = asyncio.create_task(
        evaluate(
            PythonAgent(waits),
            evalset(10, environment=spec),
            config(),
            runs=3,
            max_concurrency=8,
            output_dir=tmp_path / "out",
        )
    )
    while entered < 8:  # every slot's agent is waiting, some environments set up meanwhile
        await asyncio.sleep(0.01)
    run.cancel()  # what Ctrl-C does to the run's coroutine
    with pytest.raises(asyncio.CancelledError):
        await run
    assert COUNTS[(str(root), "setup")] >= 8
    assert COUNTS[(str(root), "setup")] == COUNTS[(str(root), "teardown")]
    assert leftovers(root) == []


async def test_cancelled_while_setting_up_the_environment_is_still_torn_down(
    tmp_path: Path,
) -> None:
    root = tmp_path / "dbs"
    root.mkdir()
    spec = {"function": "environment_targets:slow_database", "options": {"root": str(root)}}
    run = asyncio.create_task(
        evaluate(
            PythonAgent(writes_and_reads),
            evalset(4, environment=spec),
            config(),
            runs=1,
            output_dir=tmp_path / "out",
        )
    )
    while COUNTS[(str(root), "entering")] < 4:
        await asyncio.sleep(0.01)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert COUNTS[(str(root), "setup")] == COUNTS[(str(root), "teardown")] == 4
    assert leftovers(root) == []


async def test_a_failing_setup_is_an_infrastructure_error_and_the_agent_never_runs(
    tmp_path: Path,
) -> None:
    root = tmp_path / "dbs"
    root.mkdir()
    called: list[str] = []

    def agent(message: str) -> str:
        called.append(message)
        return ANSWER

    spec = {"function": "environment_targets:broken_setup", "options": {"root": str(root)}}
    run = await evaluate(
        PythonAgent(agent), evalset(2, environment=spec), config(), runs=3, output_dir=tmp_path
    )
    assert called == []
    assert COUNTS[(str(root), "attempt")] == 6
    for result in run.trials:
        error = result.trial.error
        assert error is not None and error.kind == "infrastructure"
        assert error.type == "EnvironmentSetupError"
        assert error.message == (
            "environment 'environment_targets:broken_setup': setup failed: ConnectionError: "
            "the seeded database server refused the connection"
        )
    assert run.totals.infrastructure_errors == 6
    assert all(case.rated_runs == 0 for case in run.cases)  # not the agent's failures


async def test_a_failing_teardown_is_an_infrastructure_error(tmp_path: Path) -> None:
    root = tmp_path / "dbs"
    root.mkdir()
    spec = {"function": "environment_targets:broken_teardown", "options": {"root": str(root)}}
    run = await evaluate(
        PythonAgent(lambda message: ANSWER, name="fine"),
        evalset(1),
        config(environment=spec),
        runs=2,
        output_dir=tmp_path,
    )
    assert COUNTS[(str(root), "setup")] == COUNTS[(str(root), "teardown")] == 2
    for result in run.trials:
        error = result.trial.error
        assert error is not None and error.kind == "infrastructure"
        assert error.type == "EnvironmentTeardownError"
        assert "teardown failed: OSError: could not drop the database" in error.message


@pytest.mark.parametrize(
    ("function", "why"),
    [
        ("yields_a_path", "it yielded PosixPath; yield an agentflow_eval.Environment"),
        ("not_a_manager", "it returned Environment, not a context manager"),
    ],
)
async def test_an_environment_function_of_the_wrong_shape_is_an_infrastructure_error(
    tmp_path: Path, function: str, why: str
) -> None:
    root = tmp_path / "dbs"
    root.mkdir()
    spec = {"function": f"environment_targets:{function}", "options": {"root": str(root)}}
    run = await evaluate(
        PythonAgent(lambda message: ANSWER, name="fine"),
        evalset(1, environment=spec),
        config(),
        runs=1,
        output_dir=tmp_path,
    )
    (result,) = run.trials
    assert result.trial.error is not None and result.trial.error.kind == "infrastructure"
    assert why in result.trial.error.message
    # what was entered was exited, even though it was of no use
    assert COUNTS[(str(root), "setup")] == COUNTS[(str(root), "teardown")]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("environment_targets:no_such", "has no attribute 'no_such'"),
        ("no_such_module_here:fn", "importing 'no_such_module_here' failed"),
        (
            {"function": "environment_targets:database", "options": {"rooot": "x"}},
            "cannot be called with its options",
        ),
        ("nocolon", "is not 'package.module:attr' or 'path/to/file.py:attr'"),
    ],
)
async def test_an_environment_that_cannot_load_is_refused_before_the_run(
    tmp_path: Path, spec: Any, message: str
) -> None:
    with pytest.raises((EvalFileError, ValueError)) as refused:
        await evaluate(
            PythonAgent(lambda message: ANSWER, name="fine"),
            evalset(1),
            config(environment=spec),
            output_dir=tmp_path / "out",
        )
    assert message in str(refused.value)
    assert "environment" in str(refused.value)
    assert not (tmp_path / "out").exists()


async def test_the_config_environment_replaces_the_eval_sets(tmp_path: Path) -> None:
    config_root = tmp_path / "config"
    config_root.mkdir()
    await evaluate(
        PythonAgent(writes_and_reads),
        evalset(1, environment="no_such_module_here:fn"),  # replaced: never loaded
        config(
            environment={
                "function": "environment_targets:database",
                "options": {"root": str(config_root)},
            }
        ),
        runs=2,
        output_dir=tmp_path / "out",
    )
    assert COUNTS[(str(config_root), "setup")] == 2
