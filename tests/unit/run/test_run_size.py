"""A run's size is checked before anything starts: a mistyped runs (10^12 trials per case)
is one line, and no folder is made."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.errors import InputError
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.run.plan import RunInputs, RunOptions, plan_run

EVAL_SET = EvalSet.model_validate(
    {
        "eval_set_id": "size",
        "eval_cases": [
            {
                "eval_id": f"c{n}",
                "conversation": [{"user_content": "hi"}],
                "expectations": ["completes"],
            }
            for n in range(3)
        ],
    }
)


def test_a_run_of_more_than_a_million_trials_is_refused_before_its_folder(tmp_path: Path) -> None:
    inputs = RunInputs.of(EVAL_SET, EvalConfig())
    with pytest.raises(InputError) as refused:
        plan_run(
            inputs,
            RunOptions(runs=1_000_000_000_000),
            agent=PythonAgent(lambda message: "hi"),
            output_dir=tmp_path / "out",
        )
    assert str(refused.value) == (
        "runs 1,000,000,000,000 × 3 case(s) is 3,000,000,000,000 trials, more than one run "
        "may hold (1,000,000): lower runs, or split the eval set"
    )
    assert not (tmp_path / "out").exists()


def test_a_large_run_within_the_limit_is_planned(tmp_path: Path) -> None:
    inputs = RunInputs.of(EVAL_SET, EvalConfig())
    with plan_run(
        inputs,
        RunOptions(runs=333_333),
        agent=PythonAgent(lambda message: "hi"),
        output_dir=tmp_path / "out",
    ) as handle:
        assert handle.plan.settings.runs == 333_333


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_an_output_folder_that_cannot_be_made_is_one_line(tmp_path: Path, where: str) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a folder")
    output = blocker if where == "a file" else blocker / "deeper"
    with pytest.raises(InputError) as refused:
        plan_run(
            RunInputs.of(EVAL_SET, EvalConfig()),
            RunOptions(runs=1),
            agent=PythonAgent(lambda message: "hi"),
            output_dir=output,
        )
    assert str(refused.value) == (
        f"output folder {output}: cannot create the run folder there (not a directory)"
    )
