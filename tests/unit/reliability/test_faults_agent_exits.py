"""An agent that raises KeyboardInterrupt or SystemExit (a library calling sys.exit is
enough) fails its own trial; the run goes on and finishes. (A real Ctrl-C still stops
the run: tests/e2e/test_ctrl_c_in_process.py, in a process of its own.)"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.pipeline.evaluate import evaluate
from tests.support.faults import ANSWER, answer_config, answer_evalset


def failing_c01(kind: str):  # type: ignore[no-untyped-def]
    """An agent (sync, or ``async ...``) whose case c01 ends in ``sys.exit(3)`` (``exit``)
    or a ``KeyboardInterrupt`` (``interrupt``); the other cases get the answer."""

    def answer(case_id: str) -> str:
        if case_id == "c01":
            if kind.endswith("exit"):
                sys.exit(3)
            raise KeyboardInterrupt
        return ANSWER

    def sync_agent(session) -> str:  # type: ignore[no-untyped-def]
        return answer(session.case_id)

    async def async_agent(session) -> str:  # type: ignore[no-untyped-def]
        await asyncio.sleep(0)
        return answer(session.case_id)

    return async_agent if kind.startswith("async") else sync_agent


@pytest.mark.parametrize("kind", ["exit", "interrupt", "async exit", "async interrupt"])
async def test_an_agents_own_exit_or_interrupt_fails_only_its_trials(
    tmp_path: Path, kind: str
) -> None:
    run = await evaluate(
        PythonAgent(failing_c01(kind), name="misbehaving"),
        answer_evalset(3),
        answer_config(),
        runs=2,
        output_dir=tmp_path,
    )
    errored = [r.trial for r in run.trials if r.trial.error is not None]
    assert sorted(t.case_id for t in errored) == ["c01", "c01"]
    expected = "SystemExit" if kind.endswith("exit") else "KeyboardInterrupt"
    assert {t.error.type for t in errored if t.error} == {expected}
    assert run.totals.passed == 4  # the run finished, every other trial judged
