"""What an agent prints is kept with its trial — from its own code, the threads and tasks
it starts, a sync agent's worker thread — bounded and redacted, and never reaches the
run's own output. An ``os._exit`` it calls fails its trial, named, and the run goes on.
A component's ``sys.exit`` or ``KeyboardInterrupt`` fails its trial as an agent's does.
(Subprocesses: tests/e2e/test_faults_agent_io.py, with the real CLI.)"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.files.jsonl import iter_records
from agentflow_eval.models.evalset import EvalCase
from agentflow_eval.models.results import RunResult, Trial
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.report.html import render_html
from agentflow_eval.report.scorecard import format_scorecard
from agentflow_eval.run.agent_output import OUTPUT_LIMIT_BYTES, OutputSink, RoutedStream
from agentflow_eval.run.component_trial import run_component_trial
from agentflow_eval.run.components import ComponentTarget
from agentflow_eval.run.sigint import SigintSeen
from agentflow_eval.run.trial_scope import TrialIsolation
from tests.support.faults import ANSWER, answer_config, answer_evalset
from tests.support.report_page import case_details

PLANTED_KEY = "sk-PLANTEDprintKEY0123456789abcdefghijkl"


def chatty_sync(session) -> str:  # type: ignore[no-untyped-def]
    print(f"sync says {session.case_id}#{session.trial_index} key={PLANTED_KEY}")
    print(f"sync warns {session.case_id}", file=sys.stderr)
    helper = threading.Thread(target=lambda: print(f"thread says {session.case_id}"))
    helper.start()
    helper.join()
    return ANSWER


async def chatty_async(session) -> str:  # type: ignore[no-untyped-def]
    print(f"async says {session.case_id}#{session.trial_index}")

    async def side() -> None:
        await asyncio.sleep(0)
        print(f"task says {session.case_id}")

    await asyncio.gather(side(), asyncio.to_thread(print, f"to_thread says {session.case_id}"))
    return ANSWER


async def run_agent(fn: Any, tmp_path: Path, cases: int, runs: int) -> RunResult:
    """A run of the Python agent ``fn`` over ``cases`` answer cases, ``runs`` trials each,
    all at once."""
    return await evaluate(
        PythonAgent(fn, name=fn.__name__),
        answer_evalset(cases),
        answer_config(),
        runs=runs,
        max_concurrency=cases * runs,
        output_dir=tmp_path,
    )


def trials_of(tmp_path: Path) -> list[Trial]:
    (path,) = tmp_path.glob("*/*/trials.jsonl")
    return list(iter_records(path, Trial))


@pytest.mark.parametrize("agent_fn", [chatty_sync, chatty_async])
async def test_what_an_agent_prints_is_its_trials_and_not_the_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent_fn: object
) -> None:
    await run_agent(agent_fn, tmp_path, cases=3, runs=2)
    printed = capsys.readouterr()
    assert "says" not in printed.out + printed.err
    trials = trials_of(tmp_path)
    assert len(trials) == 6
    for trial in trials:
        output = trial.agent_output
        assert output is not None
        who = f"{trial.case_id}#{trial.trial_index}"
        lines = sorted(output.stdout.splitlines())
        if agent_fn is chatty_sync:
            assert lines == sorted(
                [f"sync says {who} key=[REDACTED]", f"thread says {trial.case_id}"]
            )
            assert output.stderr == f"sync warns {trial.case_id}\n"
        else:
            assert lines == sorted(
                [
                    f"async says {who}",
                    f"task says {trial.case_id}",
                    f"to_thread says {trial.case_id}",
                ]
            )
            assert output.stderr == ""
    assert not isinstance(sys.stdout, RoutedStream)  # the stage put back what it found


def test_a_trials_output_is_bounded_and_says_how_much_more_there_was() -> None:
    sink = OutputSink()
    line = "x" * 99 + "\n"
    for _ in range(1000):
        sink.write(line)
    text = sink.close()
    kept, marker = text.rsplit("\n", 1)
    assert len(kept.encode()) <= OUTPUT_LIMIT_BYTES
    assert marker == f"… {100_000 - OUTPUT_LIMIT_BYTES} bytes more"
    sink.write("after the trial")  # an abandoned thread still printing: dropped
    assert "after" not in sink.close()


def test_a_secret_cut_by_the_limit_is_still_redacted() -> None:
    sink = OutputSink(limit_bytes=100)
    sink.write("y" * 90 + f" {PLANTED_KEY} and more")
    text = sink.close()
    assert PLANTED_KEY[:10] not in text and "bytes more" in text


def exits_on_c01(session) -> str:  # type: ignore[no-untyped-def]
    if session.case_id == "c01":
        os._exit(7)
    if session.case_id == "c02":
        with contextlib.suppress(BaseException):  # an agent that swallows everything
            os._exit(7)
    return ANSWER


async def test_os_exit_from_an_agent_fails_its_trial_naming_it(tmp_path: Path) -> None:
    run = await run_agent(exits_on_c01, tmp_path, cases=3, runs=2)
    errors = {(r.trial.case_id, r.trial.trial_index): r.trial.error for r in run.trials}
    for case_id in ("c01", "c02"):  # c02's agent caught what os._exit raised: still failed
        for index in (0, 1):
            error = errors[(case_id, index)]
            assert error is not None and error.type == "AgentExited"
            assert error.message == (
                f"the agent called os._exit(7) during trial {index + 1} of case {case_id!r}; "
                "that trial failed and the run went on"
            )
    assert run.totals.passed == 2
    assert os._exit.__name__ == "_exit"  # the guard is gone with the stage


def stops(text: str) -> str:
    sys.exit(5)


def interrupts(text: str) -> str:
    raise KeyboardInterrupt


async def async_stops(text: str) -> str:
    await asyncio.sleep(0)
    sys.exit(5)


@pytest.mark.parametrize(
    ("fn", "expected"),
    [(stops, "SystemExit"), (interrupts, "KeyboardInterrupt"), (async_stops, "SystemExit")],
)
async def test_a_components_exit_or_interrupt_fails_only_its_trial(
    fn: object, expected: str
) -> None:
    case = EvalCase.model_validate(
        {"eval_id": "c", "component": "m:f", "input": "hi", "expected_output": "x"}
    )
    target = ComponentTarget.of("m:f", fn)  # type: ignore[arg-type]
    trial = await run_component_trial(target, case, 0, 5.0, sigint=SigintSeen())
    assert trial.error is not None and trial.error.type == expected


async def test_a_users_ctrl_c_still_stops_a_component_trial() -> None:
    case = EvalCase.model_validate(
        {"eval_id": "c", "component": "m:f", "input": "hi", "expected_output": "x"}
    )
    seen = SigintSeen()
    seen.received = True  # the signal came: this interrupt is the user's
    with pytest.raises(KeyboardInterrupt):
        await run_component_trial(ComponentTarget.of("m:f", interrupts), case, 0, 5.0, sigint=seen)


def test_writes_outside_a_trial_go_where_they_went(capsys: pytest.CaptureFixture[str]) -> None:
    isolation = TrialIsolation()
    with isolation.watching():
        print("the run's own line")
        with isolation.trial("c", 0) as scope:
            print("the agent's line")
            sys.stdout.buffer.write("and its bytes ✓\n".encode())
        output = scope.close()
    assert capsys.readouterr().out == "the run's own line\n"
    assert output is not None and output.stdout == "the agent's line\nand its bytes ✓\n"


async def test_what_a_trial_printed_is_shown_in_the_report_and_verbose_scorecard(
    tmp_path: Path,
) -> None:
    run = await run_agent(chatty_sync, tmp_path, cases=1, runs=1)
    (trial,) = case_details(render_html(run), "c00")["trials"]
    assert trial["printed"] == [
        ["stdout", "sync says c00#0 key=[REDACTED]\nthread says c00\n"],
        ["stderr", "sync warns c00\n"],
    ]
    scorecard = format_scorecard(run, verbose=True)
    assert "trial 1 printed (stdout): sync says c00#0 key=[REDACTED] thread says c00" in scorecard
    assert "trial 1 printed (stderr): sync warns c00" in scorecard
    assert "printed" not in format_scorecard(run)
