"""A real Ctrl-C stops an evaluation run from Python (AgentEvaluator, a notebook, a plain
script with Python's own SIGINT handler), while a KeyboardInterrupt an agent raises itself
fails only its trial. Each in a process of its own: a Ctrl-C ends the process's loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, os, signal, sys
    from agentflow_eval.agents.python import PythonAgent
    from agentflow_eval.pipeline.evaluate import evaluate
    from agentflow_eval.run.plan import RunOptions
    from tests.support.faults import ANSWER, answer_config, answer_evalset

    how = sys.argv[2]
    # a plain program's SIGINT, whatever the test process left its children: an
    # ignored or blocked signal is inherited through exec
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.default_int_handler)

    async def agent(session):
        if session.case_id == "c01":
            if how == "ctrl-c":
                os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C
                await asyncio.sleep(1)
            else:
                raise KeyboardInterrupt  # the agent's own
        await asyncio.sleep(0.01)
        return ANSWER

    loop = asyncio.new_event_loop()  # not asyncio.run: Python's own SIGINT handler stays
    try:
        run = loop.run_until_complete(evaluate(
            PythonAgent(agent), answer_evalset(3), answer_config(),
            runs=2, output_dir=sys.argv[1]))
    except KeyboardInterrupt:
        print(json.dumps({"stopped": True}))
    else:
        print(json.dumps({"stopped": False, "passed": run.totals.passed,
                          "errored": run.totals.errored}))
    """
)


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ("ctrl-c", {"stopped": True}),
        ("agent", {"stopped": False, "passed": 4, "errored": 2}),
    ],
)
def test_ctrl_c_stops_the_run_and_an_agents_own_interrupt_does_not(
    tmp_path: Path, how: str, expected: dict[str, object]
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), how],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == expected
