"""The whole pipeline in one call, without Prefect::

    run = await evaluate(agent, eval_set, config, options=RunOptions(runs=3))
    again = await rejudge(run_dir, new_config)   # the stored trials, judged again

It plans the run, opens the run's model client (its rate limits and connection pool)
unless the caller passes one, and runs the stage list (:func:`.runner.run_pipeline`)
directly. ``AgentEvaluator`` is built on :func:`evaluate_outcome`. :func:`rejudge` runs
the same stage list on a finished run's stored trials, in a new run folder, without
calling its agent.
"""

from __future__ import annotations

from pathlib import Path

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.criteria.judges.cache import InMemoryJudgeCache, JudgeCache
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.models import defaults
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.pipeline.runner import DirectStages, RunServices, run_pipeline
from agentflow_eval.pipeline.stages import BaselineOptions
from agentflow_eval.run.identity import RunIdentity
from agentflow_eval.run.inputs import load_inputs
from agentflow_eval.run.plan import RunHandle, RunInputs, RunOptions, plan_run
from agentflow_eval.run.rejudge_source import read_rejudge_source
from agentflow_eval.storage.targets import Target

__all__ = ["evaluate", "evaluate_outcome", "rejudge", "rejudge_outcome", "with_trials"]


async def evaluate_outcome(
    agent: AgentUnderTest | None,
    inputs: RunInputs,
    *,
    options: RunOptions | None = None,
    output_dir: str | Path = defaults.OUTPUT_DIR,
    judge_cache: JudgeCache | None = None,
    models: ModelClient | None = None,
    baseline: BaselineOptions | None = None,
    publish_to: Target | None = None,
    identity: RunIdentity | None = None,
) -> RunOutcome:
    """Plan a run of ``agent`` on ``inputs`` under ``output_dir`` and run every stage;
    returns where the run is and what it found. ``models`` makes the run's model calls
    (default: a client under the config's rate limits, opened and closed here; a caller's
    client stays the caller's to close); ``judge_cache`` keeps judge replies across calls
    (default: this run only)."""
    handle = plan_run(
        inputs, options or RunOptions(), agent=agent, output_dir=output_dir, identity=identity
    )
    return await _run_planned(handle, agent, judge_cache, models, baseline, publish_to)


async def _run_planned(
    handle: RunHandle,
    agent: AgentUnderTest | None,
    judge_cache: JudgeCache | None,
    models: ModelClient | None,
    baseline: BaselineOptions | None,
    publish_to: Target | None,
) -> RunOutcome:
    """Every stage of a planned run, directly; the folder's lock released at the end."""
    with handle:
        plan = handle.plan
        cache = judge_cache if judge_cache is not None else InMemoryJudgeCache()
        if models is not None:
            services = RunServices(agent, models, cache, baseline, publish_to)
            return await run_pipeline(plan, services, DirectStages())
        async with ModelClient(RateLimiter.from_config(plan.config)) as own:
            services = RunServices(agent, own, cache, baseline, publish_to)
            return await run_pipeline(plan, services, DirectStages())


async def rejudge_outcome(
    source: str | Path,
    inputs: RunInputs | None = None,
    *,
    output_dir: str | Path | None = None,
    judge_cache: JudgeCache | None = None,
    models: ModelClient | None = None,
    baseline: BaselineOptions | None = None,
    publish_to: Target | None = None,
    identity: RunIdentity | None = None,
) -> RunOutcome:
    """Judge the stored trials of the finished run at ``source`` again with ``inputs``
    (default: the eval set and config the source was started with), in a new run folder
    under ``output_dir`` (default: beside the source), without calling its agent; then
    aggregate, compare, report and publish as any run. The source is only read."""
    found = read_rejudge_source(source)
    if inputs is None:
        started = found.params()
        inputs = load_inputs(started.evalset, started.config, judge_model=started.judge_model)
    handle = plan_run(
        inputs,
        RunOptions(),
        agent=None,
        output_dir=output_dir if output_dir is not None else found.output_root,
        identity=identity,
        rejudge=found,
    )
    return await _run_planned(handle, None, judge_cache, models, baseline, publish_to)


async def rejudge(
    source: str | Path,
    config: EvalConfig | None = None,
    *,
    eval_set: EvalSet | None = None,
    output_dir: str | Path | None = None,
    judge_cache: JudgeCache | None = None,
    models: ModelClient | None = None,
    baseline: BaselineOptions | None = None,
    publish_to: Target | None = None,
) -> RunResult:
    """Judge the finished run at ``source`` again with ``config`` (default: its own
    config) on ``eval_set`` (default: the eval set it was started with), without running
    its agent; returns the new run's results with every trial. ``judge_cache`` keeps judge
    replies across calls, so an unchanged judge prompt is not paid twice (see
    :func:`rejudge_outcome`)."""
    inputs: RunInputs | None = None
    if eval_set is not None:
        inputs = RunInputs.of(eval_set, config)
    elif config is not None:
        started = read_rejudge_source(source).params()
        inputs = load_inputs(started.evalset, config)
    outcome = await rejudge_outcome(
        source,
        inputs,
        output_dir=output_dir,
        judge_cache=judge_cache,
        models=models,
        baseline=baseline,
        publish_to=publish_to,
    )
    return with_trials(outcome)


async def evaluate(
    agent: AgentUnderTest | None,
    eval_set: EvalSet,
    config: EvalConfig | None = None,
    *,
    options: RunOptions | None = None,
    output_dir: str | Path = defaults.OUTPUT_DIR,
    judge_cache: JudgeCache | None = None,
    models: ModelClient | None = None,
    baseline: BaselineOptions | None = None,
    publish_to: Target | None = None,
    identity: RunIdentity | None = None,
) -> RunResult:
    """Evaluate ``agent`` on ``eval_set`` (judged by ``config``, default ADK's criteria)
    and write the run folder under ``output_dir``. Returns the run's results with every
    trial (``results.json``, ``report.html`` and ``junit.xml`` are in the folder)."""
    outcome = await evaluate_outcome(
        agent,
        RunInputs.of(eval_set, config),
        options=options,
        output_dir=output_dir,
        judge_cache=judge_cache,
        models=models,
        baseline=baseline,
        publish_to=publish_to,
        identity=identity,
    )
    return with_trials(outcome)


def with_trials(outcome: RunOutcome) -> RunResult:
    """The outcome's run with its judged trials, in the order ``results.json`` holds them
    (case id, then trial index)."""
    run = outcome.run
    if outcome.trials is None:
        return run
    case_ids = sorted(case.case_id for case in run.cases)
    trials = [result for case_id in case_ids for result in outcome.trials.trials_of(case_id)]
    return run.model_copy(update={"trials": trials})
