"""The whole pipeline in one call from Python, without Prefect::

    run = await evaluate(agent, eval_set, config, runs=3)
    again = await rejudge(run_dir, new_config)   # the stored trials, judged again

Each keyword setting is a field of the run request
(:class:`~agentflow_eval.models.request.RunRequest`: ``runs``, ``max_concurrency``,
``trial_timeout_s``, ``baseline``, ``publish_to``, ``min_pass_rate``, ``track``, ...),
spelled as the CLI's flags and the flow's parameters spell it; an unknown one is refused
naming it. These functions build the request and hand it to the one call that runs every
request (:func:`.execute.execute`). The agent, eval set and config may be objects or what
names them (a spec, a file). ``judge_cache`` keeps judge replies across calls (default:
this run only); ``models`` makes the run's model calls (default: a client under the
config's rate limits; a caller's client stays the caller's to close).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.criteria.judges.cache import JudgeCache
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.execute import RunObjects, Runtime, execute
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.run.rejudge_source import read_rejudge_source

__all__ = [
    "evaluate",
    "evaluate_outcome",
    "rejudge",
    "rejudge_outcome",
    "request_of",
    "with_trials",
]


def request_of(
    agent: AgentUnderTest | str | None,
    eval_set: EvalSet | str | Path | None,
    config: EvalConfig | str | Path | None,
    settings: dict[str, Any],
) -> tuple[RunRequest, RunObjects]:
    """The run request a Python door makes of its arguments (names into the request,
    objects beside it), completed from this process's environment as every door's is."""
    named = {
        key: str(value) if isinstance(value, Path) else value for key, value in settings.items()
    }
    for key, value in (("agent", agent), ("evalset", eval_set), ("config", config)):
        if isinstance(value, str | Path):
            named[key] = str(value)
    objects = RunObjects(
        agent=agent if isinstance(agent, AgentUnderTest) else None,
        eval_set=eval_set if isinstance(eval_set, EvalSet) else None,
        config=config if isinstance(config, EvalConfig) else None,
    )
    return RunRequest.model_validate(named).with_environment(os.environ), objects


async def evaluate_outcome(
    agent: AgentUnderTest | str | None,
    eval_set: EvalSet | str | Path,
    config: EvalConfig | str | Path | None = None,
    *,
    judge_cache: JudgeCache | None = None,
    models: ModelClient | None = None,
    **settings: Any,
) -> RunOutcome:
    """Evaluate ``agent`` on ``eval_set`` with the request ``settings`` make; returns where
    the run is, what it found and its gates' verdict (nothing raised for a failed gate)."""
    request, objects = request_of(agent, eval_set, config, settings)
    return await execute(request, Runtime(judge_cache=judge_cache, models=models), objects=objects)


async def evaluate(
    agent: AgentUnderTest | str | None,
    eval_set: EvalSet | str | Path,
    config: EvalConfig | str | Path | None = None,
    *,
    judge_cache: JudgeCache | None = None,
    models: ModelClient | None = None,
    **settings: Any,
) -> RunResult:
    """Evaluate ``agent`` on ``eval_set`` (judged by ``config``, default ADK's criteria)
    and write the run folder under ``output_dir``. Returns the run's results with every
    trial (``results.json``, ``report.html`` and ``junit.xml`` are in the folder)."""
    outcome = await evaluate_outcome(
        agent, eval_set, config, judge_cache=judge_cache, models=models, **settings
    )
    return with_trials(outcome)


async def rejudge_outcome(
    source: str | Path,
    config: EvalConfig | str | Path | None = None,
    *,
    eval_set: EvalSet | str | Path | None = None,
    judge_cache: JudgeCache | None = None,
    models: ModelClient | None = None,
    **settings: Any,
) -> RunOutcome:
    """Judge the stored trials of the finished run at ``source`` again with ``config``
    (default: the config the source was started with) on ``eval_set`` (default: the eval
    set it was started with), in a new run folder under ``output_dir`` (default: beside
    the source), without calling its agent; then aggregate, compare, report and publish
    as any run. The source is only read."""
    settings = {"rejudge_from": str(source), **settings}
    request, objects = request_of(None, eval_set, config, settings)
    if "output_dir" not in settings:  # beside the source
        request = request.updated(output_dir=str(read_rejudge_source(source).output_root))
    return await execute(request, Runtime(judge_cache=judge_cache, models=models), objects=objects)


async def rejudge(
    source: str | Path,
    config: EvalConfig | str | Path | None = None,
    *,
    eval_set: EvalSet | str | Path | None = None,
    judge_cache: JudgeCache | None = None,
    models: ModelClient | None = None,
    **settings: Any,
) -> RunResult:
    """Judge the finished run at ``source`` again (see :func:`rejudge_outcome`); returns
    the new run's results with every trial. ``judge_cache`` keeps judge replies across
    calls, so an unchanged judge prompt is not paid twice."""
    outcome = await rejudge_outcome(
        source, config, eval_set=eval_set, judge_cache=judge_cache, models=models, **settings
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
