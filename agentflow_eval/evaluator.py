"""``AgentEvaluator``: the pytest front door.

It runs the same stages with the same defaults as the CLI and the evaluate flow
(:mod:`agentflow_eval.pipeline`: plan → trials → judging → aggregate → compare → reports →
publish), without starting Prefect, so a test suite pays only for the agent's own latency. Each
run writes its folder (results.json, report.html, junit.xml) under ``output_dir``::

    async def test_weather_agent():
        await AgentEvaluator.evaluate_file(
            "examples.weather.agent:agent", "examples/weather/weather.evalset.json",
            config={"criteria": {"tool_trajectory_avg_score": 1.0}}, min_pass_rate=0.8,
        )

A run below ``min_pass_rate`` raises :class:`EvaluationFailed`, whose message names each
case that fell short with its expected tool calls against the failing trials' actual ones,
and where the report is. Under pytest, the plugin's options (``--agentflow-output``,
``--agentflow-runs``, ...) apply to every run (:mod:`agentflow_eval.evaluator_session`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypedDict, Unpack

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.loader import load_agent
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.compare.brief import comparison_lines
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.criteria.config_files import config_from_data, load_config
from agentflow_eval.criteria.judges.cache import InMemoryJudgeCache, JudgeCache
from agentflow_eval.demo import install_for as install_demo_for
from agentflow_eval.evaluator_session import FinishedRun, announce, current_settings
from agentflow_eval.models import defaults
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.params import S3Options
from agentflow_eval.models.results import RunResult
from agentflow_eval.models.tolerances import EfficiencyTolerances, parse_increase
from agentflow_eval.pipeline.evaluate import evaluate_outcome, rejudge_outcome, with_trials
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.pipeline.stages import BaselineOptions
from agentflow_eval.report.scorecard import format_failures
from agentflow_eval.run.identity import RunIdentity
from agentflow_eval.run.meta import models_named
from agentflow_eval.run.plan import RunInputs, RunOptions, load_inputs
from agentflow_eval.run.rejudge_source import read_rejudge_source
from agentflow_eval.storage.targets import Target, target_of

__all__ = [
    "AgentEvaluator",
    "EvalInputWarning",
    "EvaluationFailed",
    "RegressionFound",
    "RunGates",
]


class RunGates(TypedDict, total=False):
    """What :meth:`AgentEvaluator.evaluate` and :meth:`AgentEvaluator.rejudge` check a
    run against and where they publish it: ``min_pass_rate`` (below it,
    :class:`EvaluationFailed`); ``baseline``, an earlier run to compare with (``latest``:
    the last one published to ``publish_to``; a run folder, its results.json or an
    ``s3://`` location) and, with ``fail_on_regression``, :class:`RegressionFound` when
    the run regressed (or the baseline cannot be read); ``max_cost_increase``,
    ``max_latency_increase``, ``max_token_increase`` and ``max_tool_call_increase``
    (``"10%"`` or ``0.1``) make a significant increase beyond them a regression too
    (without them efficiency is only reported); ``publish_to`` (``s3://bucket/prefix`` or
    a folder, ``s3`` its options) publishes the reports."""

    min_pass_rate: float | None
    baseline: str | None
    publish_to: str | Path | None
    s3: S3Options | None
    fail_on_regression: bool
    max_cost_increase: str | float | None
    max_latency_increase: str | float | None
    max_token_increase: str | float | None
    max_tool_call_increase: str | float | None


class EvalInputWarning(UserWarning):
    """Something in the eval set or config that is accepted but not used as written (an
    unknown key, an expectation no criterion judges): the CLI prints these; from Python
    they are warnings, which pytest lists in its summary."""


class EvaluationFailed(AssertionError):
    """The pass rate fell below what the test asked for."""

    def __init__(self, run: RunResult, min_pass_rate: float, run_dir: Path | None = None) -> None:
        self.run = run
        self.min_pass_rate = min_pass_rate
        self.run_dir = run_dir
        totals = run.totals
        where = f"\nreport: {run_dir / 'report.html'}" if run_dir is not None else ""
        super().__init__(
            f"{run.eval_set_id}: pass rate {totals.pass_rate:.0%} ({totals.passed}/"
            f"{totals.trials}) below {min_pass_rate:.0%}\n{format_failures(run)}{where}"
        )


class RegressionFound(AssertionError):
    """A run evaluated with ``fail_on_regression`` regressed from its baseline, or its
    baseline could not be read (so a regression cannot be ruled out)."""

    def __init__(self, record: RunComparison, run_dir: Path) -> None:
        self.record = record
        self.run_dir = run_dir
        lines = "\n".join(comparison_lines(record))
        super().__init__(f"{lines}\nreport: {run_dir / 'report.html'}")


class AgentEvaluator:
    """Evaluate an agent on eval sets from Python; see the module docstring.

    ``judge_cache`` keeps judge replies between this evaluator's runs (default: in
    memory, so re-evaluating the same answers asks no judge twice).
    """

    def __init__(
        self,
        agent: AgentUnderTest | str | Callable[..., Any],
        config: EvalConfig | dict[str, Any] | str | Path | None = None,
        *,
        model: str | None = None,
        output_dir: str | Path = defaults.OUTPUT_DIR,
        judge_cache: JudgeCache | None = None,
    ) -> None:
        if isinstance(agent, str):
            self.agent = load_agent(agent, model=model)
        elif isinstance(agent, AgentUnderTest) or not callable(agent):
            self.agent = agent
        else:  # an agent function, as a spec naming it would give
            self.agent = PythonAgent(agent)
        self.config = _config(config)
        self.output_dir = Path(output_dir)
        self.judge_cache = judge_cache if judge_cache is not None else InMemoryJudgeCache()

    async def evaluate(
        self,
        eval_set: EvalSet | str | Path,
        *,
        runs: int | None = None,
        max_concurrency: int | None = None,
        timeout_s: float | None = None,
        output_dir: str | Path | None = None,
        agent_version: str | None = None,
        git_sha: str | None = None,
        labels: Mapping[str, str] | None = None,
        **gates: Unpack[RunGates],
    ) -> RunResult:
        """Run the eval set (an object, or a file or folder whose ``test_config.json``
        is used when the evaluator has no config); raise :class:`EvaluationFailed` below
        ``min_pass_rate``. Settings left out come from the config, then the defaults.

        As ``agentflow-eval run`` does, ``gates`` (:class:`RunGates`: ``baseline``,
        ``fail_on_regression``, the efficiency tolerances, ``publish_to``, ``s3``,
        ``min_pass_rate``) compare, publish and raise; ``agent_version``, ``git_sha`` and
        ``labels`` are recorded with the run (the version and commit default to the CI
        variables the CLI reads).
        """
        session = current_settings()
        if isinstance(eval_set, EvalSet):
            inputs = RunInputs.of(eval_set, self.config)
        else:
            inputs = load_inputs(eval_set, self.config)
            for message in inputs.warnings:
                warnings.warn(message, EvalInputWarning, stacklevel=2)
        inputs = _with_session_judge(inputs, session.judge_model)
        compared_with = _baseline_options(gates)
        root = session.output_dir or Path(output_dir if output_dir is not None else self.output_dir)
        # agentflow-demo/* models answer offline, whoever calls them (when the run needs them)
        install_demo_for(models_named(inputs.config, getattr(self.agent, "model", None)))
        outcome = await evaluate_outcome(
            self.agent,
            inputs,
            options=RunOptions(
                runs=session.runs or runs,
                max_concurrency=session.max_concurrency or max_concurrency,
                trial_timeout_s=timeout_s,
            ),
            output_dir=root,
            judge_cache=self.judge_cache,
            baseline=compared_with,
            publish_to=_publish_target(gates),
            identity=RunIdentity.of(
                os.environ, agent_version=agent_version, git_sha=git_sha, labels=labels
            ),
        )
        return _finished(outcome, gates.get("min_pass_rate"))

    @classmethod
    async def rejudge(
        cls,
        run_dir: str | Path,
        config: EvalConfig | dict[str, Any] | str | Path | None = None,
        *,
        eval_set: EvalSet | str | Path | None = None,
        output_dir: str | Path | None = None,
        judge_cache: JudgeCache | None = None,
        **gates: Unpack[RunGates],
    ) -> RunResult:
        """Judge the stored trials of the finished run in ``run_dir`` again, as
        ``agentflow-eval rejudge`` does: with ``config`` (default: the run's own) on
        ``eval_set`` (default: the one it was started with; a run started from Python
        must name it), without calling its agent, in a new run folder (``output_dir``,
        default beside the source). Returns the new run's results with every trial;
        ``gates`` (:class:`RunGates`) compare, publish and raise as :meth:`evaluate`'s."""
        session = current_settings()
        chosen = _config(config)
        if isinstance(eval_set, EvalSet):
            inputs = RunInputs.of(eval_set, chosen)
        else:
            if eval_set is not None:
                inputs = load_inputs(eval_set, chosen)
            elif chosen is not None:
                inputs = load_inputs(read_rejudge_source(run_dir).params().evalset, chosen)
            else:  # the source's own eval set, config and judge model
                started = read_rejudge_source(run_dir).params()
                inputs = load_inputs(
                    started.evalset, started.config, judge_model=started.judge_model
                )
            for message in inputs.warnings:
                warnings.warn(message, EvalInputWarning, stacklevel=2)
        inputs = _with_session_judge(inputs, session.judge_model)
        compared_with = _baseline_options(gates)
        install_demo_for(models_named(inputs.config, None))
        root = session.output_dir or (Path(output_dir) if output_dir is not None else None)
        outcome = await rejudge_outcome(
            run_dir,
            inputs,
            output_dir=root,
            judge_cache=judge_cache if judge_cache is not None else InMemoryJudgeCache(),
            baseline=compared_with,
            publish_to=_publish_target(gates),
            identity=RunIdentity.of(os.environ),
        )
        return _finished(outcome, gates.get("min_pass_rate"))

    @classmethod
    async def evaluate_file(
        cls,
        agent: AgentUnderTest | str | None = None,
        eval_file: str | Path | None = None,
        config: EvalConfig | dict[str, Any] | str | Path | None = None,
        *,
        agent_module: str | None = None,
        config_file: str | Path | None = None,
        min_pass_rate: float = 1.0,
        **options: Any,
    ) -> RunResult:
        """Load, run, and assert the pass rate (1.0 by default).

        ``agent_module`` and ``config_file`` are the names Google ADK's evaluator uses for
        ``agent`` and ``config``; either spelling works, not both.
        """
        if (agent is None) == (agent_module is None):
            raise TypeError("evaluate_file() takes the agent as agent= or agent_module=, once")
        if config is not None and config_file is not None:
            raise TypeError("evaluate_file() takes the config as config= or config_file=, once")
        if eval_file is None:
            raise TypeError("evaluate_file() needs eval_file=")
        chosen = agent if agent is not None else agent_module
        assert chosen is not None
        evaluator = cls(chosen, config if config is not None else config_file)
        return await evaluator.evaluate(eval_file, min_pass_rate=min_pass_rate, **options)


def _baseline_options(gates: RunGates) -> BaselineOptions | None:
    """The comparison a run asked for (None without a baseline)."""
    baseline, publish_to = gates.get("baseline"), gates.get("publish_to")
    if baseline is None:
        return None
    if baseline.strip().rstrip("/") == "latest" and not publish_to:
        raise ValueError("baseline='latest' is the last run published to publish_to: give both")
    return BaselineOptions(
        baseline,
        publish_to=str(publish_to) if publish_to is not None else None,
        s3=gates.get("s3"),
        fail_on_regression=gates.get("fail_on_regression", False),
        tolerances=EfficiencyTolerances(
            max_cost_increase=parse_increase(gates.get("max_cost_increase")),
            max_latency_increase=parse_increase(gates.get("max_latency_increase")),
            max_token_increase=parse_increase(gates.get("max_token_increase")),
            max_tool_call_increase=parse_increase(gates.get("max_tool_call_increase")),
        ),
    )


def _publish_target(gates: RunGates) -> Target | None:
    publish_to = gates.get("publish_to")
    return target_of(publish_to, gates.get("s3")) if publish_to is not None else None


def _with_session_judge(inputs: RunInputs, judge_model: str | None) -> RunInputs:
    """``inputs`` judged by the pytest session's judge model, when it names one."""
    if not judge_model:
        return inputs
    config = inputs.config.model_copy(deep=True)
    config.judge.model = judge_model
    return replace(inputs, config=config)


def _finished(outcome: RunOutcome, min_pass_rate: float | None) -> RunResult:
    """The run's results with every trial, announced to the session; raises when it
    regressed from its baseline or fell below ``min_pass_rate``."""
    run = with_trials(outcome)
    announce(FinishedRun(run, outcome.run_dir))
    if outcome.comparison is not None and outcome.comparison.gate_failed:
        raise RegressionFound(outcome.comparison, outcome.run_dir)
    if min_pass_rate is not None and run.totals.pass_rate < min_pass_rate:
        raise EvaluationFailed(run, min_pass_rate, outcome.run_dir)
    return run


def _config(config: EvalConfig | dict[str, Any] | str | Path | None) -> EvalConfig | None:
    if config is None or isinstance(config, EvalConfig):
        return config
    if isinstance(config, dict):
        return config_from_data(config)
    return load_config(config)
