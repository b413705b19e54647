"""Fault matrix, area 1 — agents that hang: the trial timeout holds for every agent kind.

- a synchronous agent that never returns fails its own trials only: its threads are
  abandoned (and replaced), never awaited, so healthy trials keep their threads and the
  run ends;
- an async agent that blocks the event loop (a blocking sleep, a busy loop) is stopped by
  the loop watchdog, and its trials fail with a reason naming the agent;
- an agent that behaves is never flagged.

(The CLI runs of the same agents, which must exit on their own, are in
tests/e2e/test_faults_cli.py.)
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.agents.threads import AgentThreads
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.run.loop_watchdog import EventLoopBlocked, LoopWatchdog
from agentflow_eval.run.thread_clock import ThreadClock
from tests.support.faults import ANSWER, answer_config, answer_evalset

CASES, HUNG = 20, 6
RELEASE = threading.Event()  # lets the abandoned threads go when the module is done


@pytest.fixture(autouse=True, scope="module")
def release_hung_threads():
    RELEASE.clear()  # hung agents hang while the module's tests run (set up again: again)
    yield
    RELEASE.set()


def hangs(case_id: str, hung: int = HUNG) -> bool:
    return int(case_id.removeprefix("c")) < hung


BLOCKING = 2  # async blocks are stopped one after another: keep them few


def sync_hanging_agent(session) -> str:  # type: ignore[no-untyped-def]
    if hangs(session.case_id):
        RELEASE.wait()
    return ANSWER


async def test_hung_sync_agents_fail_alone_and_starve_no_one(tmp_path: Path) -> None:
    # 6 hung cases of 20 at concurrency 8: a fixed pool of 8 threads would fill with hung
    # calls after the first timeouts, and every later trial would time out waiting
    agent = PythonAgent(sync_hanging_agent)
    run = await evaluate(
        agent,
        answer_evalset(CASES),
        answer_config(),
        runs=1,
        max_concurrency=8,
        trial_timeout_s=1.0,
        output_dir=tmp_path,
    )
    errors = {t.trial.case_id: t.trial.error for t in run.trials if t.trial.error}
    assert sorted(errors) == [f"c{i:02d}" for i in range(HUNG)]
    assert {e.kind for e in errors.values()} == {"timeout"}
    assert run.totals.passed == CASES - HUNG and run.totals.trials == CASES
    threads = agent._call.threads
    assert threads is not None and threads.stats.abandoned == HUNG
    assert threads.stats.stuck == HUNG  # still inside their calls...
    assert all(
        t.daemon for t in threading.enumerate() if t.name.startswith("agentflow agent")
    )  # ...and nothing waits for them at exit


async def test_an_abandoned_call_gives_its_place_to_the_next() -> None:
    pool = AgentThreads(name="test")
    gate = threading.Event()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):
            await pool.run(gate.wait)
    assert pool.live_threads == 0 and pool.stats.stuck == 1
    assert await pool.run(lambda: "next") == "next"
    gate.set()
    await asyncio.sleep(0.1)
    assert pool.stats.stuck == 0


async def test_a_worker_thread_returns_values_and_raises_errors() -> None:
    pool = AgentThreads(name="test")

    def boom() -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError, match="missing"):
        await pool.run(boom)
    assert await pool.run(lambda x, y=0: x + y, 2, y=3) == 5


async def blocking_agent(session) -> str:  # type: ignore[no-untyped-def]
    if hangs(session.case_id, BLOCKING):
        time.sleep(30)  # blocks the event loop: every trial beside it stalls
    await asyncio.sleep(0.01)
    return ANSWER


async def busy_agent(session) -> str:  # type: ignore[no-untyped-def]
    if hangs(session.case_id, BLOCKING):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # a pure-Python busy loop
            pass
    return ANSWER


async def swallowing_agent(session) -> str:  # type: ignore[no-untyped-def]
    if hangs(session.case_id, BLOCKING):
        try:
            time.sleep(30)
        except Exception:  # the stop is not an Exception: this does not swallow it
            return "swallowed"
    return ANSWER


@pytest.mark.parametrize("agent_fn", [blocking_agent, busy_agent, swallowing_agent])
async def test_an_async_agent_that_blocks_the_loop_is_stopped(tmp_path: Path, agent_fn) -> None:
    run = await evaluate(
        PythonAgent(agent_fn),
        answer_evalset(6),
        answer_config(),
        runs=1,
        max_concurrency=6,
        trial_timeout_s=1.0,
        output_dir=tmp_path,
    )
    blocked = [t.trial for t in run.trials if t.trial.error]
    assert sorted(t.case_id for t in blocked) == [f"c{i:02d}" for i in range(BLOCKING)]
    for trial in blocked:
        assert trial.error is not None and trial.error.type == "EventLoopBlocked"
        assert f"agent {agent_fn.__name__!r} blocked the event loop" in trial.error.message
        assert f"in {agent_fn.__name__} (test_faults_hung_agents.py:" in trial.error.message
        assert "and was stopped:" in trial.error.message  # interrupted, not waited out
    assert run.totals.passed == 4  # the trials beside them were not stalled into timeouts


async def test_a_well_behaved_async_agent_is_never_flagged(tmp_path: Path) -> None:
    async def polite(session) -> str:  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.05)
        return ANSWER

    run = await evaluate(
        PythonAgent(polite),
        answer_evalset(10),
        answer_config(),
        runs=3,
        max_concurrency=10,
        trial_timeout_s=1.0,
        output_dir=tmp_path,
    )
    assert run.totals.passed == 30 and run.totals.errored == 0


async def test_a_block_outside_any_agent_is_left_alone() -> None:
    watchdog = LoopWatchdog(limit_s=0.2)
    with watchdog.watching():
        time.sleep(0.6)  # the loop is ours to block: no trial runs here
        await asyncio.sleep(0)
    assert watchdog.blocks == []


async def test_the_interrupt_lands_only_inside_the_blocked_agent() -> None:
    watchdog = LoopWatchdog(limit_s=0.2)
    caught: list[str] = []

    async def trial() -> None:
        with watchdog.guard() as guard:
            try:
                time.sleep(5)
            except EventLoopBlocked as exc:
                caught.append(str(exc))
            assert guard.block is not None and guard.block.interrupted

    with watchdog.watching():
        await asyncio.create_task(trial())
        await asyncio.sleep(0.3)  # the watchdog's cancel, if any, finds the guard closed
    assert len(caught) == 1 and "trial (test_faults_hung_agents.py:" in caught[0]


async def test_an_agent_swallowing_every_interruption_is_interrupted_again_then_given_up() -> None:
    given_up: list[tuple[object, str]] = []
    swallowed = 0

    def give_up(block, key) -> None:  # type: ignore[no-untyped-def]
        given_up.append((key, block.where))

    watchdog = LoopWatchdog(limit_s=0.2, abandon_after_s=0.6, on_unstoppable=give_up)

    async def trial() -> None:
        nonlocal swallowed
        with watchdog.guard(("c00", 2)):
            while not given_up:  # an agent that will not stop (until the test lets it)
                try:
                    time.sleep(0.05)
                except BaseException:
                    swallowed += 1

    with watchdog.watching():
        await asyncio.create_task(trial())
    assert swallowed >= 2  # interrupted again after it swallowed the first
    assert [key for key, _ in given_up] == [("c00", 2)]
    assert "trial (test_faults_hung_agents.py:" in given_up[0][1]


# ------------------------------------------------------- the machine's load is not a block


class StarvedClock(ThreadClock):
    """A loop thread that stands ready without a CPU: no CPU time used, never waiting in
    the kernel (what a thread's clock reads while other processes hold every core)."""

    def __init__(self) -> None:
        super().__init__(cpu_clock=None, stat=None)

    def advance(self) -> float:
        return 0.0


async def test_a_loop_starved_of_cpu_is_not_taken_for_a_blocking_agent() -> None:
    """The same stall as a blocking agent's, but the loop thread did none of it: the
    watchdog charges only the thread's own work, so the agent is not stopped."""
    watchdog = LoopWatchdog(limit_s=0.2, clock_of=StarvedClock)
    finished: list[bool] = []

    async def trial() -> None:
        with watchdog.guard() as guard:
            time.sleep(0.8)  # stands for the load: the loop does not turn meanwhile
            finished.append(guard.block is None)

    with watchdog.watching():
        await asyncio.create_task(trial())
        await asyncio.sleep(0.1)
    assert finished == [True] and watchdog.blocks == []


def test_the_threads_own_work_is_its_cpu_time_or_its_waiting() -> None:
    clock = ThreadClock.of_current_thread()
    if clock.cpu_clock is None or clock.stat is None:
        pytest.skip("the thread's CPU clock or /proc state cannot be read here")
    clock.restart()
    used_before = time.thread_time()
    deadline = time.monotonic() + 0.3
    while time.monotonic() < deadline:  # running: its CPU time is its own work
        pass
    busy = clock.advance()
    used = time.thread_time() - used_before
    # whatever share of a CPU the machine gave the thread, the clock counts that share
    assert busy > 0 and abs(busy - used) < 0.05
    assert clock.waiting() is False  # the calling thread is running now
    waiter = threading.Event()
    seen: list[bool | None] = []

    def watch(target: ThreadClock) -> None:
        time.sleep(0.1)
        seen.append(target.waiting())
        waiter.set()

    watcher = threading.Thread(target=watch, args=(clock,))
    watcher.start()
    time.sleep(0.3)  # asleep in the kernel: waiting counts in full
    watcher.join()
    assert seen == [True]
