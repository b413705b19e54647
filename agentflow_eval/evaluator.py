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

Each run is a run request (:class:`~agentflow_eval.models.request.RunRequest`) made of
the evaluator's agent and config and the keyword settings given, run by the one call every
front door ends in (:func:`~agentflow_eval.pipeline.execute.execute`). A run below
``min_pass_rate`` raises :class:`EvaluationFailed`, whose message names each case that
fell short with its expected tool calls against the failing trials' actual ones, and where
the report is. Under pytest, the plugin's options (``--agentflow-output-dir``,
``--agentflow-runs``, ...) apply to every run (:mod:`agentflow_eval.evaluator_session`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.compare.brief import comparison_lines
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.criteria.config_files import config_from_data
from agentflow_eval.criteria.judges.cache import InMemoryJudgeCache, JudgeCache
from agentflow_eval.evaluator_session import FinishedRun, announce, current_settings
from agentflow_eval.models import defaults
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.evaluate import rejudge_outcome, request_of, with_trials
from agentflow_eval.pipeline.execute import RunObjects, Runtime, execute
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.report.scorecard import format_failures

__all__ = [
    "AgentEvaluator",
    "EvalInputWarning",
    "EvaluationFailed",
    "RegressionFound",
    "UntrustworthyJudgeWarning",
]


class EvalInputWarning(UserWarning):
    """Something in the eval set or config that is accepted but not used as written (an
    unknown key, an expectation no criterion judges): the CLI prints these; from Python
    they are warnings, which pytest lists in its summary."""


class UntrustworthyJudgeWarning(UserWarning):
    """A judge agreed with the people who labelled its verdicts less than the run's
    ``min_judge_agreement`` asked: its pass rates are reported as it gave them, beside
    the rates corrected for its measured error."""


class EvaluationFailed(AssertionError):
    """The run fell short of the pass rate the test asked for (``shortfalls`` says how)."""

    def __init__(
        self,
        run: RunResult,
        shortfalls: tuple[str, ...],
        run_dir: Path | None = None,
        *,
        min_pass_rate: float | None = None,
    ) -> None:
        self.run = run
        self.shortfalls = shortfalls
        self.min_pass_rate = min_pass_rate
        self.run_dir = run_dir
        where = f"\nreport: {run_dir / 'report.html'}" if run_dir is not None else ""
        said = "; ".join(shortfalls)
        super().__init__(f"{run.eval_set_id}: {said}\n{format_failures(run)}{where}")


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

    ``agent`` is an agent object, an agent function, or a spec naming one
    (``"my_agent:agent"``, with ``model`` replacing a LiteLLM agent's model). ``config``
    is a config object, its dict, or a config file. ``judge_cache`` keeps judge replies
    between this evaluator's runs (default: in memory, so re-evaluating the same answers
    asks no judge twice).
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
        if isinstance(agent, str | AgentUnderTest) or not callable(agent):
            self.agent: AgentUnderTest | str = agent
        else:  # an agent function, as a spec naming it would give
            self.agent = PythonAgent(agent)
        self.model = model
        self.config = _config(config)
        self.output_dir = Path(output_dir)
        self.judge_cache = judge_cache if judge_cache is not None else InMemoryJudgeCache()

    def request_for(
        self, eval_set: EvalSet | str | Path, **settings: Any
    ) -> tuple[RunRequest, RunObjects]:
        """The run request :meth:`evaluate` runs for ``eval_set`` and ``settings``: the
        evaluator's agent, model, config and output folder, the settings given, and over
        them the session's (the pytest plugin's options)."""
        given: dict[str, Any] = {"output_dir": str(self.output_dir), **settings}
        if self.model is not None:
            given.setdefault("model", self.model)
        return request_of(self.agent, eval_set, self.config, current_settings().over(given))

    async def evaluate(self, eval_set: EvalSet | str | Path, **settings: Any) -> RunResult:
        """Run the eval set (an object, or a file or folder whose ``test_config.json``
        is used when the evaluator has no config); raise :class:`EvaluationFailed` below
        ``min_pass_rate`` and :class:`RegressionFound` when ``fail_on_regression`` finds
        one. ``settings`` are the run request's fields, as ``agentflow-eval run``'s flags
        and the flow's parameters name them (``runs``, ``max_concurrency``,
        ``trial_timeout_s``, ``baseline``, ``publish_to``, ``s3``, the efficiency
        tolerances, ``agent_version``, ``git_sha``, ``labels``, ``track``, ...); left
        out, they come from the config, then the defaults."""
        request, objects = self.request_for(eval_set, **settings)
        outcome = await execute(request, Runtime(judge_cache=self.judge_cache), objects=objects)
        return _finished(outcome)

    @classmethod
    async def rejudge(
        cls,
        run_dir: str | Path,
        config: EvalConfig | dict[str, Any] | str | Path | None = None,
        *,
        eval_set: EvalSet | str | Path | None = None,
        judge_cache: JudgeCache | None = None,
        **settings: Any,
    ) -> RunResult:
        """Judge the stored trials of the finished run in ``run_dir`` again, as
        ``agentflow-eval rejudge`` does: with ``config`` (default: the run's own) on
        ``eval_set`` (default: the one it was started with; a run started from Python
        must name it), without calling its agent, in a new run folder (``output_dir``,
        default beside the source). Returns the new run's results with every trial;
        ``settings`` (request fields) compare, publish and raise as :meth:`evaluate`'s."""
        outcome = await rejudge_outcome(
            run_dir,
            _config(config),
            eval_set=eval_set,
            judge_cache=judge_cache if judge_cache is not None else InMemoryJudgeCache(),
            **current_settings().over(settings),
        )
        return _finished(outcome)

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
        **settings: Any,
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
        return await evaluator.evaluate(eval_file, min_pass_rate=min_pass_rate, **settings)


def _finished(outcome: RunOutcome) -> RunResult:
    """The run's results with every trial, announced to the session; raises when a gate
    of its request failed: the regression first, then the pass rate."""
    run = with_trials(outcome)
    announce(FinishedRun(run, outcome.run_dir))
    for warning in outcome.warnings:
        warnings.warn(warning, EvalInputWarning, stacklevel=3)
    gates = outcome.gates
    for judge in gates.untrustworthy_judges:
        warnings.warn(judge, UntrustworthyJudgeWarning, stacklevel=3)
    if gates.regression is not None:
        raise RegressionFound(gates.regression, outcome.run_dir)
    if gates.shortfalls:
        raise EvaluationFailed(
            run, gates.shortfalls, outcome.run_dir, min_pass_rate=gates.min_pass_rate
        )
    return run


def _config(config: EvalConfig | dict[str, Any] | str | Path | None) -> EvalConfig | str | None:
    """A config as the request takes it: an object (a dict read into one), else the
    file's name."""
    if config is None or isinstance(config, EvalConfig):
        return config
    if isinstance(config, dict):
        return config_from_data(config)
    return str(config)
