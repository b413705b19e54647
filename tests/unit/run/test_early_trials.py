"""Trials started before the flow that owns them: joined once, each trial run once, the
joiner's callbacks in the joiner's context, and nothing finished lost on cancel."""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections import Counter
from pathlib import Path

import pytest

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.models.results import Trial
from agentflow_eval.run.early_trials import EarlyTrials
from agentflow_eval.run.plan import RunPlan, plan_run
from agentflow_eval.run.stages import completed_keys

CASES, RUNS = 4, 3


class GatedAgent(PythonAgent):
    """Answers only when let through, so a test decides how many trials finish."""

    def __init__(self) -> None:
        self._permits = asyncio.Semaphore(0)
        self.calls: list[str] = []
        super().__init__(self.answer, name="gated")

    def let_through(self, answers: int = CASES * RUNS) -> None:
        for _ in range(answers):
            self._permits.release()

    async def answer(self, message: str) -> str:
        await self._permits.acquire()
        self.calls.append(message)
        return "42"


def make_plan(folder: Path, *, resume: Path | None = None) -> RunPlan:
    evalset = folder / "set.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "early",
                "eval_cases": [
                    {
                        "eval_id": f"case{i}",
                        "conversation": [
                            {"user_content": f"q{i}", "expected_final_response": "42"}
                        ],
                    }
                    for i in range(CASES)
                ],
            }
        ),
        encoding="utf-8",
    )
    params = EvaluateParams(
        agent="unused:agent",
        evalset=str(evalset),
        runs=RUNS,
        output_dir=str(folder / "out"),
        resume=str(resume) if resume else None,
    )
    return plan_run(params, agent_name="gated", agent_model=None)


async def test_joined_trials_run_each_case_and_trial_once(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    agent = GatedAgent()
    early = EarlyTrials.begin(plan, agent, rate_limiter=RateLimiter.from_config(plan.config))
    assert EarlyTrials.find(plan.paths.run_dir) is early
    # the same folder, spelled differently, finds the same trials
    assert EarlyTrials.find(plan.paths.run_dir / ".." / plan.paths.run_dir.name) is early
    agent.let_through()

    counts = await early.join()

    assert (counts.written, counts.skipped, counts.errored) == (CASES * RUNS, 0, 0)
    keys = Counter(completed_keys(plan.paths.trials))
    assert set(keys) == {(f"case{i}", t) for i in range(CASES) for t in range(RUNS)}
    assert set(keys.values()) == {1}
    assert len(agent.calls) == CASES * RUNS
    assert EarlyTrials.find(plan.paths.run_dir) is None  # joined: released


async def test_the_joiner_hears_later_trials_in_its_own_context(tmp_path: Path) -> None:
    """The trials began before the flow run; progress callbacks must still run in the
    flow's context (there, Prefect has its API URL; in the trials' context it has none
    and would start a server of its own)."""
    plan = make_plan(tmp_path)
    agent = GatedAgent()
    where = contextvars.ContextVar("where", default="trials' context")
    early = EarlyTrials.begin(plan, agent, rate_limiter=RateLimiter.from_config(plan.config))
    where.set("joiner's context")  # set after the trials' task copied its context
    heard: list[tuple[str, str]] = []

    def on_trial(trial: Trial) -> None:
        heard.append((trial.case_id, where.get()))

    joined = asyncio.create_task(early.join(on_trial))
    await asyncio.sleep(0)  # the joiner is following before any trial finishes
    agent.let_through()
    await joined

    assert len(heard) == CASES * RUNS
    assert {context for _, context in heard} == {"joiner's context"}
    assert early.finished == CASES * RUNS


async def test_cancelled_trials_keep_what_finished_and_a_resume_runs_the_rest(
    tmp_path: Path,
) -> None:
    plan = make_plan(tmp_path)
    agent = GatedAgent()
    limiter = RateLimiter.from_config(plan.config)
    early = EarlyTrials.begin(plan, agent, rate_limiter=limiter)
    agent.let_through(3)
    while early.finished < 3:
        await asyncio.sleep(0.001)
    await early.cancel()

    finished = completed_keys(plan.paths.trials)
    assert len(finished) == 3
    assert EarlyTrials.find(plan.paths.run_dir) is None

    resumed = make_plan(tmp_path, resume=plan.paths.run_dir)
    again = EarlyTrials.begin(resumed, agent, rate_limiter=limiter)
    agent.let_through()
    counts = await again.join()
    assert counts.skipped == len(finished)
    assert counts.written == CASES * RUNS - len(finished)
    assert Counter(completed_keys(plan.paths.trials)).most_common(1)[0][1] == 1


async def test_one_run_folder_has_one_set_of_trials_under_way(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    agent = GatedAgent()
    limiter = RateLimiter.from_config(plan.config)
    early = EarlyTrials.begin(plan, agent, rate_limiter=limiter)
    with pytest.raises(RuntimeError, match="already under way"):
        EarlyTrials.begin(plan, agent, rate_limiter=limiter)
    await early.cancel()


async def test_a_stage_that_failed_is_reported_to_the_joiner(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    plan.paths.trials.mkdir(parents=True)  # trials.jsonl cannot be opened: the stage fails
    early = EarlyTrials.begin(plan, GatedAgent(), rate_limiter=RateLimiter.from_config(plan.config))
    await early.wait()  # ends without raising: the failure is the joiner's to see
    with pytest.raises(OSError):
        await early.join()
    assert EarlyTrials.find(plan.paths.run_dir) is None


async def test_wait_returns_once_the_stage_ended_and_leaves_the_counts_to_join(
    tmp_path: Path,
) -> None:
    plan = make_plan(tmp_path)
    agent = GatedAgent()
    early = EarlyTrials.begin(plan, agent, rate_limiter=RateLimiter.from_config(plan.config))
    waiting = asyncio.create_task(early.wait())
    await asyncio.sleep(0.01)
    assert not waiting.done()  # no trial may finish yet
    agent.let_through()
    await waiting
    assert early.finished == CASES * RUNS
    assert EarlyTrials.find(plan.paths.run_dir) is early  # still there for the flow
    assert (await early.join()).written == CASES * RUNS
