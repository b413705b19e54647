"""Agent code that swallows its cancellation cannot hold its trial, the run's deadline or
the event loop: past its timeout it is cancelled, and past the grace after that it is
abandoned — never resumed again, never awaited, its answer (if it ever gives one) not
taken. (The CLI runs, which must end on their own, are in
tests/e2e/test_swallowed_cancellation.py.)"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.models.defaults import CANCEL_GRACE_S
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.run.abandonable import Overran, run_abandonable
from tests.support.faults import ANSWER, answer_config, answer_evalset

TIMEOUT_S, GRACE_S = 0.3, 0.3


class Swallower:
    """``while True: try: await asyncio.sleep(...) except BaseException: pass``, counting
    the times it wakes."""

    def __init__(self, *, answers_after_s: float | None = None) -> None:
        self.wakes = 0
        self.answers_after_s = answers_after_s

    async def run(self) -> str:
        started = time.monotonic()
        while True:
            try:  # noqa: SIM105 - the agent's own words
                await asyncio.sleep(0.02)
            except BaseException:  # the point of the test
                pass
            self.wakes += 1
            if self.answers_after_s is not None and (
                time.monotonic() - started >= self.answers_after_s
            ):
                return ANSWER


async def test_work_that_swallows_every_cancellation_is_abandoned_after_its_grace() -> None:
    work = Swallower()
    started = time.monotonic()
    with pytest.raises(Overran) as overran:
        await run_abandonable(work.run(), timeout_s=TIMEOUT_S, grace_s=GRACE_S)
    took = time.monotonic() - started
    assert overran.value.abandoned
    assert "did not finish within 0.3 s; it ignored its cancellation for 0.3 s more" in str(
        overran.value
    )
    assert TIMEOUT_S + GRACE_S <= took < TIMEOUT_S + GRACE_S + 0.5
    wakes = work.wakes
    await asyncio.sleep(0.2)
    assert work.wakes <= wakes + 1  # never resumed again (but for the last cancellation)


async def test_an_answer_after_the_timeout_is_never_taken() -> None:
    late = Swallower(answers_after_s=TIMEOUT_S + GRACE_S / 3)  # within the grace
    with pytest.raises(Overran) as overran:
        await run_abandonable(late.run(), timeout_s=TIMEOUT_S, grace_s=GRACE_S)
    assert not overran.value.abandoned  # it ended in its grace, with an answer: not taken
    much_later = Swallower(answers_after_s=10 * (TIMEOUT_S + GRACE_S))
    with pytest.raises(Overran) as overran:
        await run_abandonable(much_later.run(), timeout_s=TIMEOUT_S, grace_s=GRACE_S)
    assert overran.value.abandoned


async def test_work_that_stops_when_cancelled_is_overran_at_its_timeout() -> None:
    started = time.monotonic()
    with pytest.raises(Overran) as overran:
        await run_abandonable(asyncio.sleep(60), timeout_s=TIMEOUT_S, grace_s=10)
    assert not overran.value.abandoned
    assert time.monotonic() - started < TIMEOUT_S + 0.5


@pytest.mark.parametrize("raised", [ValueError("no"), KeyboardInterrupt(), SystemExit(3)])
async def test_results_and_exceptions_reach_the_caller(raised: BaseException) -> None:
    async def answers() -> str:
        await asyncio.sleep(0)
        return ANSWER

    async def raises() -> None:
        await asyncio.sleep(0)
        raise raised

    assert await run_abandonable(answers(), timeout_s=5, grace_s=GRACE_S) == ANSWER
    # raised here, in the caller's task: a KeyboardInterrupt never escapes the loop
    with pytest.raises(type(raised)):
        await run_abandonable(raises(), timeout_s=5, grace_s=GRACE_S)


async def test_a_deadline_around_it_holds_within_the_grace() -> None:
    work = Swallower()
    started = time.monotonic()
    with pytest.raises(TimeoutError) as stopped:
        async with asyncio.timeout(TIMEOUT_S):  # the run's deadline, say
            await run_abandonable(work.run(), timeout_s=None, grace_s=GRACE_S)
    assert not isinstance(stopped.value, Overran)  # the deadline's own
    assert time.monotonic() - started < TIMEOUT_S + GRACE_S + 0.5
    wakes = work.wakes
    await asyncio.sleep(0.2)
    assert work.wakes <= wakes + 1


def test_a_loop_that_abandoned_work_still_ends() -> None:
    # asyncio.run cancels every task left at its end and waits for them: an abandoned
    # work's task has ended, so nothing is left to wait for
    async def main() -> bool:
        try:
            await run_abandonable(Swallower().run(), timeout_s=TIMEOUT_S, grace_s=GRACE_S)
        except Overran as overran:
            return overran.abandoned
        return False

    outcome: list[bool] = []
    thread = threading.Thread(target=lambda: outcome.append(asyncio.run(main())), daemon=True)
    thread.start()
    thread.join(TIMEOUT_S + GRACE_S + 10)
    assert not thread.is_alive(), "asyncio.run never returned"
    assert outcome == [True]


async def swallowing_agent(session) -> str:  # type: ignore[no-untyped-def]
    if session.case_id == "c00":  # swallows every cancellation
        while True:
            try:  # noqa: SIM105 - the agent's own words
                await asyncio.sleep(0.1)
            except BaseException:  # the point of the test
                pass
    if session.case_id == "c01":  # swallows one, and answers long after its timeout
        try:  # noqa: SIM105 - the agent's own words
            await asyncio.sleep(60)
        except BaseException:
            pass
        await asyncio.sleep(2 * CANCEL_GRACE_S)
    await asyncio.sleep(0.01)
    return ANSWER


def test_trials_of_an_agent_swallowing_cancellation_time_out_and_the_run_ends(
    tmp_path: Path,
) -> None:
    # in a thread of its own, so that a run that never ends fails the test instead of
    # hanging it
    runs: list[RunResult] = []
    thread = threading.Thread(
        target=lambda: runs.append(
            asyncio.run(
                evaluate(
                    PythonAgent(swallowing_agent),
                    answer_evalset(4),
                    answer_config(),
                    runs=2,
                    trial_timeout_s=0.5,
                    output_dir=tmp_path,
                )
            )
        ),
        daemon=True,
    )
    thread.start()
    thread.join(0.5 + CANCEL_GRACE_S + 30)  # the trials run at once
    assert not thread.is_alive(), "the run never ended"
    (run,) = runs
    errors = {(t.trial.case_id, t.trial.trial_index): t.trial.error for t in run.trials}
    for index in (0, 1):
        forever, late = errors[("c00", index)], errors[("c01", index)]
        assert forever is not None and forever.kind == "timeout"
        assert forever.message == (
            "trial did not finish within 0.5 s; it ignored its cancellation for "
            f"{CANCEL_GRACE_S:g} s more and was abandoned"
        )
        assert late is not None and late.kind == "timeout"  # never passed
    assert (run.totals.passed, run.totals.errored) == (4, 4)
    assert len(list(tmp_path.glob("*/*/results.json"))) == 1
