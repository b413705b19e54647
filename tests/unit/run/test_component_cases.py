"""Component cases run: each trial calls the function (a sync one in a worker thread, an
async one awaited) under the trial timeout, and records what it returned; what goes wrong
is the trial's error, never raised. Targets load when the run is planned: a bad one is
one line naming file, case and field, with nothing written."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.models.evalset import EvalCase, EvalSet
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.run.component_trial import run_component_trial
from agentflow_eval.run.components import ComponentTarget, load_components

CALLED_IN: list[str] = []


def route(text: str, *, tier: str = "basic") -> dict[str, Any]:
    CALLED_IN.append(threading.current_thread().name)
    return {"queue": "billing" if "refund" in text else "sales", "tier": tier}


async def classify(text: str) -> str:
    await asyncio.sleep(0)
    return "weather" if "rain" in text else "other"


def explode(text: str) -> str:
    raise RuntimeError(f"cannot read {text!r}")


def hang(text: str) -> str:
    time.sleep(5)
    return "late"


def component_case(spec: str = "m:f", **fields: Any) -> EvalCase:
    fields.setdefault("input", "I want a refund")
    fields.setdefault("expected_output", "x")
    return EvalCase.model_validate({"eval_id": "c", "component": spec, **fields})


async def test_a_sync_component_runs_in_a_worker_thread_and_its_output_is_kept() -> None:
    case = component_case(arguments={"text": "refund please", "tier": "gold"}, input=None)
    trial = await run_component_trial(ComponentTarget.of("m:route", route), case, 2, 5.0)
    assert trial.error is None and trial.trial_index == 2
    (turn,) = trial.turns
    assert turn.output == {"queue": "billing", "tier": "gold"}
    assert json.loads(turn.final_response or "") == turn.output
    assert turn.user_text == '{"text": "refund please", "tier": "gold"}'
    assert CALLED_IN[-1] != threading.current_thread().name


async def test_an_async_component_is_awaited() -> None:
    case = component_case(input="rain later?")
    trial = await run_component_trial(ComponentTarget.of("m:classify", classify), case, 0, 5.0)
    assert (trial.turns[0].output, trial.turns[0].final_response) == ("weather", "weather")


async def test_an_exception_and_a_timeout_are_the_trials_errors() -> None:
    raised = await run_component_trial(
        ComponentTarget.of("m:explode", explode), component_case(), 0, 5.0
    )
    assert raised.error is not None
    assert (raised.error.kind, raised.error.type) == ("exception", "RuntimeError")
    assert "cannot read 'I want a refund'" in raised.error.message
    assert raised.turns[0].final_response is None

    started = time.perf_counter()
    hung = await run_component_trial(ComponentTarget.of("m:hang", hang), component_case(), 0, 0.2)
    assert time.perf_counter() - started < 2  # abandoned to its thread, not waited for
    assert hung.error is not None and hung.error.kind == "timeout"
    assert hung.error.message == "component 'm:hang' did not return within 0.2 s"


def test_a_target_that_cannot_be_used_is_one_line_per_problem(tmp_path: Path) -> None:
    module = tmp_path / "targets.py"
    module.write_text("LABELS = ['a']\ndef one(text):\n    return text\n")
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "s",
            "eval_cases": [
                {"eval_id": "a", "component": f"{module}:nope", "input": 1, "expected_output": 1},
                {"eval_id": "b", "component": f"{module}:nope", "input": 2, "expected_output": 2},
                {"eval_id": "c", "component": f"{module}:LABELS", "input": 1, "expected_output": 1},
                {
                    "eval_id": "d",
                    "component": f"{module}:one",
                    "arguments": {"txt": "x"},
                    "expected_output": "x",
                },
                {"eval_id": "e", "component": "no_such_pkg:f", "input": 1, "expected_output": 1},
            ],
        }
    )
    with pytest.raises(EvalFileError) as raised:
        load_components(eval_set, "s.evalset.json")
    lines = [problem.describe() for problem in raised.value.problems]
    # one line for the two cases that name the same missing function
    assert lines[0].startswith(f"case 'a': component: '{module}:nope': 'agentflow_agent_targets")
    assert lines[0].endswith("has no attribute 'nope' (and 1 more cases)")
    assert lines[1] == f"case 'c': component: '{module}:LABELS' is a list, not a function"
    assert lines[2] == (
        f"case 'd': arguments: '{module}:one' cannot be called with it: missing a required "
        "argument: 'text'"
    )
    assert lines[3].startswith(
        "case 'e': component: 'no_such_pkg:f': importing 'no_such_pkg' failed: ModuleNotFoundError"
    )
    assert len(lines) == 4


async def test_a_run_of_component_cases_needs_no_agent(tmp_path: Path) -> None:
    module = tmp_path / "intents.py"
    module.write_text("def classify(text):\n    return 'weather' if 'rain' in text else 'other'\n")
    spec = f"{module}:classify"
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "intents",
            "eval_cases": [
                {
                    "eval_id": "rain",
                    "component": spec,
                    "input": "rain?",
                    "expected_output": "weather",
                },
                {
                    "eval_id": "sun",
                    "component": spec,
                    "input": "sun?",
                    "expected_output": "weather",
                },
            ],
        }
    )
    result = await evaluate(None, eval_set, runs=2, output_dir=tmp_path / "out")
    assert result.agent == spec
    assert {case.case_id: (case.passed, case.runs) for case in result.cases} == {
        "rain": (2, 2),
        "sun": (0, 2),
    }
    assert {c.criterion for trial in result.trials for c in trial.criteria} == {"output_matches"}


async def test_an_async_component_that_blocks_the_loop_is_stopped(tmp_path: Path) -> None:
    module = tmp_path / "stuck.py"
    module.write_text("import time\n\nasync def stuck(text):\n    time.sleep(3)\n    return text\n")
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "stuck",
            "eval_cases": [
                {"eval_id": "s", "component": f"{module}:stuck", "input": "x"}
                | {"expected_output": "x"}
            ],
        }
    )
    started = time.perf_counter()
    result = await evaluate(
        None,
        eval_set,
        runs=1,
        trial_timeout_s=0.5,
        output_dir=tmp_path / "out",
    )
    assert time.perf_counter() - started < 3  # interrupted, not waited out
    error = result.trials[0].trial.error
    assert error is not None and (error.kind, error.type) == ("timeout", "EventLoopBlocked")
    assert error.message.startswith(f"component '{module}:stuck' blocked the event loop")
