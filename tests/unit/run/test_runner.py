"""The pipeline's stages without Prefect: trials, judging, aggregation."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentflow_eval.agents.base import (
    MaxStepsExceeded,
    SessionContext,
    TrajectoryRecorder,
    current_session,
    trial_workdir,
)
from agentflow_eval.criteria.base import CriterionContext, scored
from agentflow_eval.criteria.judges.runtime import JudgeRuntime
from agentflow_eval.criteria.registry import register
from agentflow_eval.files.jsonl import iter_records
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalSet, Message
from agentflow_eval.models.results import Trial, TrialResult
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.run.aggregate import aggregate
from agentflow_eval.run.judging import judge_trials
from agentflow_eval.run.plan import RunMeta
from agentflow_eval.run.trials import run_trials
from tests.support.plans import make_plan


@dataclass
class AnswerIs:
    """Test criterion: the final answer equals config.text."""

    name: str
    label: str
    threshold: float
    text: str

    async def evaluate(self, ctx: CriterionContext):
        return scored(self, float(ctx.trial.final_response == self.text))


@register("test_answer_is")
def _answer_is(name: str, options: CriterionConfig, config: EvalConfig) -> AnswerIs:
    return AnswerIs(name, f"answer is {options.text}", 1.0, options.text or "")


class ScriptedAgent:
    """Answers from a shared script; an exhausted script raises, as a mock model with too
    few replies would."""

    name = "scripted"

    def __init__(self, behaviours):
        self.behaviours = list(behaviours)

    async def start_session(self, context: SessionContext):
        return self

    async def respond(self, message: Message, recorder: TrajectoryRecorder) -> str:
        if not self.behaviours:
            raise RuntimeError("mock provider exhausted")
        behaviour = self.behaviours.pop(0)
        return await behaviour(message, recorder)

    async def aclose(self) -> None:
        pass


def evalset(n_cases: int = 1) -> EvalSet:
    return EvalSet.model_validate(
        {
            "eval_set_id": "s",
            "eval_cases": [
                {"eval_id": f"case{i}", "conversation": [{"user_content": "p"}]}
                for i in range(n_cases)
            ],
        }
    )


CONFIG = EvalConfig(criteria={"test_answer_is": CriterionConfig(text="a")})


async def answer(text):
    async def behave(message, recorder):
        return text

    return behave


async def _run(tmp_path: Path, agent, runs: int, es: EvalSet | None = None, **options):
    return await evaluate(
        agent,
        es or evalset(),
        CONFIG,
        runs=runs,
        **options,
        output_dir=tmp_path,
    )


async def test_tally_all_pass(tmp_path):
    """Two scripted final answers, two runs → 2/2."""
    agent = ScriptedAgent([await answer("a"), await answer("a")])
    run = await _run(tmp_path, agent, runs=2)
    (case,) = run.cases
    assert (case.passed, case.runs) == (2, 2)
    assert (run.totals.passed, run.totals.trials) == (2, 2)


async def test_tally_counts_failures_in_the_rate(tmp_path):
    """One scripted answer, two runs → the run that found the script exhausted counts: 1/2."""
    agent = ScriptedAgent([await answer("a")])
    run = await _run(tmp_path, agent, runs=2, max_concurrency=1)
    (case,) = run.cases
    assert (case.passed, case.runs, case.errored) == (1, 2, 1)
    errored = [t for t in run.trials if t.status == "errored"]
    assert errored[0].trial.error.message == "mock provider exhausted"
    assert errored[0].trial.error.kind == "exception"


async def test_a_raising_and_a_hanging_trial_fail_alone(tmp_path):
    async def hang(message, recorder):
        recorder.tool_call("slow_tool", {"x": 1}, "started")
        await asyncio.sleep(3600)

    async def steps(message, recorder):
        raise MaxStepsExceeded(4)

    agent = ScriptedAgent([hang, steps, await answer("a")])
    run = await _run(tmp_path, agent, runs=3, max_concurrency=1, trial_timeout_s=0.2)
    by_index = {t.trial.trial_index: t for t in run.trials}
    assert by_index[0].trial.error.kind == "timeout"
    # what the agent did before hanging is kept
    assert by_index[0].trial.turns[0].tool_calls[0].name == "slow_tool"
    assert by_index[1].trial.error.kind == "max_steps"
    assert by_index[2].status == "passed"
    assert (run.cases[0].passed, run.cases[0].errored) == (1, 2)


async def test_each_trial_has_a_fresh_session_and_its_own_workdir(tmp_path):
    seen: list[tuple[str, Path]] = []
    project = Path.cwd()

    class NoteAgent:
        name = "notes"

        async def start_session(self, context):
            return self

        async def respond(self, message, recorder):
            session = current_session()
            workdir = trial_workdir()
            (workdir / "notes.jsonl").write_text("buy milk\n")
            seen.append((session.session_id, workdir))
            return "a"

        async def aclose(self):
            pass

    await _run(tmp_path, NoteAgent(), runs=3, es=evalset(2))
    assert len({sid for sid, _ in seen}) == 6
    assert len({wd for _, wd in seen}) == 6
    assert all(project not in wd.parents and wd != project for _, wd in seen)
    assert all(not wd.exists() for _, wd in seen)  # cleaned up
    assert not (project / "notes.jsonl").exists()


async def test_a_workdir_exists_only_once_a_trial_asks_for_it(tmp_path):
    """Workdirs are reserved, not made: a trial that never asks leaves no directory."""
    workroot = tmp_path / "work"
    workroot.mkdir()

    class MaybeWrites:
        name = "maybe"

        async def start_session(self, context):
            self.context = context
            return self

        async def respond(self, message, recorder):
            if current_session().trial_index == 1:
                (trial_workdir() / "out.txt").write_text("x")
            return "a"

        async def aclose(self):
            pass

    run = await _run(
        tmp_path, MaybeWrites(), runs=2, max_concurrency=1, workroot=workroot, keep_workdirs=True
    )
    [wrote] = list(workroot.iterdir())
    assert (wrote / "out.txt").read_text() == "x"
    by_index = {t.trial.trial_index: t.trial.workdir for t in run.trials}
    assert by_index == {0: None, 1: str(wrote)}


async def test_trials_stream_to_disk_and_resume_skips_finished_ones(tmp_path):
    calls = 0

    class Counting:
        name = "counting"

        async def start_session(self, context):
            return self

        async def respond(self, message, recorder):
            nonlocal calls
            calls += 1
            return "a"

        async def aclose(self):
            pass

    plan = make_plan(evalset(2), Counting(), tmp_path, runs=2)
    path = plan.paths.trials
    await run_trials(plan, Counting(), ModelClient())
    assert calls == 4
    lines = path.read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(line)["case_id"] for line in lines)
    # drop one finished trial as if the process died before writing it
    path.write_text("\n".join(lines[:3]) + "\n")
    counts = await run_trials(plan, Counting(), ModelClient())
    assert (counts.skipped, counts.written, calls) == (3, 1, 5)
    keys = sorted(t.key for t in iter_records(path, Trial))
    assert keys == [("case0", 0), ("case0", 1), ("case1", 0), ("case1", 1)]


async def test_concurrency_is_bounded(tmp_path):
    in_flight = peak = 0

    class Slow:
        name = "slow"

        async def start_session(self, context):
            return self

        async def respond(self, message, recorder):
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1
            return "a"

        async def aclose(self):
            pass

    plan = make_plan(evalset(10), Slow(), tmp_path, runs=5, max_concurrency=7)
    await run_trials(plan, Slow(), ModelClient())
    assert peak == 7


async def test_a_criterion_that_raises_is_not_evaluated_and_the_run_completes(tmp_path):
    @dataclass
    class Broken:
        name: str = "broken"
        label: str = "broken"
        threshold: float = 1.0

        async def evaluate(self, ctx):
            raise KeyError("oops")

    register("test_broken")(lambda n, o, c: Broken())
    agent = ScriptedAgent([await answer("a")])
    config = EvalConfig(criteria={"test_broken": CriterionConfig()})
    plan = make_plan(evalset(), agent, tmp_path, config, runs=1)
    await run_trials(plan, agent, ModelClient())
    await judge_trials(plan, JudgeRuntime())
    (result,) = list(iter_records(plan.paths.judged, TrialResult))
    assert result.status == "not_evaluated"
    assert "KeyError" in result.criteria[0].reason


def test_aggregate_reports_rates_intervals_and_means(tmp_path):
    from datetime import UTC, datetime

    from agentflow_eval.models.results import CriterionResult

    def tr(i, passed):
        status = "passed" if passed else "failed"
        crit = CriterionResult(
            criterion="c", label="c", status=status, score=float(passed), threshold=1.0
        )
        trial = Trial(case_id="case0", trial_index=i, started_at=datetime.now(UTC))
        return TrialResult(trial=trial, criteria=[crit], status=status)

    meta = RunMeta(run_id="r", agent="a", started_at=datetime.now(UTC), runs_per_case=5)
    run = aggregate(evalset(), CONFIG, [tr(i, i < 3) for i in range(5)], meta)
    (case,) = run.cases
    assert (case.passed, case.runs, case.pass_rate) == (3, 5, 0.6)
    assert case.ci_low < 0.6 < case.ci_high
    assert case.criteria[0].mean_score == pytest.approx(0.6)
    assert case.pass_at_k["1"] == pytest.approx(0.6)
    assert case.pass_hat_k["5"] == 0.0
    assert run.totals.pass_rate == pytest.approx(0.6)


def test_no_test_leaves_files_in_the_project():
    assert not os.path.exists("notes.jsonl")
