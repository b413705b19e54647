"""Case subsets: ``--case PATTERN`` / ``--limit N`` and the flow's ``cases``/``limit``."""

from __future__ import annotations

import pytest

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.run.plan import RunInputs, RunOptions, plan_run
from agentflow_eval.run.selection import select_cases

IDS = ["weather_tokyo", "weather_paris", "refund_simple", "refund_partial", "greeting"]


def eval_set() -> EvalSet:
    return EvalSet.model_validate(
        {
            "eval_set_id": "support",
            "eval_cases": [{"eval_id": i, "conversation": [{"user_content": "hi"}]} for i in IDS],
        }
    )


def ids(selected: EvalSet) -> list[str]:
    return [case.eval_id for case in selected.eval_cases]


def test_patterns_are_shell_style_on_the_whole_id_and_any_may_match() -> None:
    assert ids(select_cases(eval_set(), ["weather_*"])) == ["weather_tokyo", "weather_paris"]
    assert ids(select_cases(eval_set(), ["refund_?artial", "greeting"])) == [
        "refund_partial",
        "greeting",
    ]


def test_a_pattern_must_match_the_whole_id_case_sensitively() -> None:
    with pytest.raises(ValueError, match=r"no case of eval set 'support' matches 'weather'"):
        select_cases(eval_set(), ["weather"])
    with pytest.raises(ValueError, match=r"matches 'WEATHER_\*'; its cases: weather_tokyo, "):
        select_cases(eval_set(), ["WEATHER_*"])


def test_limit_keeps_the_first_cases_after_the_patterns_in_file_order() -> None:
    assert ids(select_cases(eval_set(), None, 2)) == ["weather_tokyo", "weather_paris"]
    assert ids(select_cases(eval_set(), ["refund_*", "greeting"], 2)) == [
        "refund_simple",
        "refund_partial",
    ]
    assert select_cases(eval_set(), None, 99) == eval_set()  # more than there are: all
    with pytest.raises(ValueError, match="limit must be at least 1"):
        select_cases(eval_set(), None, 0)


def test_the_plan_runs_only_the_subset_and_says_so(tmp_path) -> None:
    def agent(message: str) -> str:
        return "hello"

    with plan_run(
        RunInputs.of(eval_set(), EvalConfig.default()),
        RunOptions(runs=2, cases=("refund_*",), limit=1),
        agent=PythonAgent(agent),
        output_dir=tmp_path,
    ) as run:
        plan = run.plan
    assert ids(plan.eval_set) == ["refund_simple"]
    assert plan.total_trials == 2
    assert plan.meta.notes == ("subset: 1 of 5 cases (case 'refund_*', limit 1)",)
    with pytest.raises(ValueError, match="limit must be at least 1"):
        RunOptions(limit=0)
