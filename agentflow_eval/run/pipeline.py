"""The whole pipeline in one call, without Prefect: plan → trials → judging → reports.

It runs the same stages, with the same defaults, as the evaluate flow (whose tasks wrap
each stage) and the CLI; ``AgentEvaluator`` is built on it::

    run = await evaluate(agent, eval_set, config, options=RunOptions(runs=3))

The run's model client (its rate limits and connection pool) and its judge runtime are
created here and passed to the stages that use them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.criteria.judges.cache import InMemoryJudgeCache, JudgeCache
from agentflow_eval.criteria.judges.runtime import JudgeRuntime
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.models import defaults
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.case_trials import JudgedFileTrials
from agentflow_eval.report.writer import write_run_reports
from agentflow_eval.run.judging import judge_trials
from agentflow_eval.run.plan import RunInputs, RunOptions, RunPlan, plan_run
from agentflow_eval.run.trials import run_trials

__all__ = ["evaluate", "run_stages"]


async def evaluate(
    agent: AgentUnderTest,
    eval_set: EvalSet,
    config: EvalConfig | None = None,
    *,
    options: RunOptions | None = None,
    output_dir: str | Path = defaults.OUTPUT_DIR,
    judge_cache: JudgeCache | None = None,
    models: ModelClient | None = None,
) -> RunResult:
    """Evaluate ``agent`` on ``eval_set`` (judged by ``config``, default ADK's criteria)
    and write the run folder under ``output_dir``. Returns the run's results with every
    trial (``results.json``, ``report.html`` and ``junit.xml`` are in the folder).

    ``judge_cache`` keeps judge replies across calls (default: this run only).
    ``models`` makes the run's model calls (default: a client under the config's rate
    limits, opened and closed here); a caller's client stays the caller's to close.
    """
    inputs = RunInputs.of(eval_set, config)
    plan = plan_run(inputs, options or RunOptions(), agent=agent, output_dir=output_dir)
    cache = judge_cache if judge_cache is not None else InMemoryJudgeCache()
    try:
        if models is None:
            async with ModelClient(RateLimiter.from_config(plan.config)) as own:
                await run_stages(plan, agent, own, judge_cache=cache)
        else:
            await run_stages(plan, agent, models, judge_cache=cache)
        run = await asyncio.to_thread(
            write_run_reports, plan.eval_set, plan.config, plan.meta, plan.paths
        )
    finally:
        plan.release()  # the run folder is free for a resume
    return with_trials(run, plan)


async def run_stages(
    plan: RunPlan, agent: AgentUnderTest, models: ModelClient, *, judge_cache: JudgeCache | None
) -> None:
    """The trial and judge stages of ``plan``, their model calls going through
    ``models``."""
    await run_trials(plan, agent, models)
    await judge_trials(plan, JudgeRuntime(plan.config.judge, models=models, cache=judge_cache))


def with_trials(run: RunResult, plan: RunPlan) -> RunResult:
    """``run`` with its judged trials read back from the run folder, in the order
    ``results.json`` holds them (case id, then trial index)."""
    index = JudgedFileTrials.scan(plan.paths.judged)
    case_ids = sorted(case.case_id for case in run.cases)
    trials = [result for case_id in case_ids for result in index.trials_of(case_id)]
    return run.model_copy(update={"trials": trials})
