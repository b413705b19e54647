"""``AgentEvaluator``: the pytest front door (seed 001 §4–5).

It runs the same core pipeline as the Prefect flow (trials → judge → aggregate), without
starting Prefect, so a test suite pays only for the agent's own latency::

    async def test_weather_agent():
        await AgentEvaluator.evaluate_file(
            "examples.weather.agent:agent", "tests/fixtures/weather.evalset.json",
            config={"criteria": {"tool_trajectory_avg_score": 1.0}}, min_pass_rate=0.8,
        )

A run below ``min_pass_rate`` raises :class:`EvaluationFailed`, whose message is the
scorecard with the failing trials spelled out.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.criteria.judges.cache import InMemoryJudgeCache
from agentflow_eval.criteria.judges.runtime import JudgeRuntime
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.scorecard import format_scorecard
from agentflow_eval.run.simulated_user import turn_source_factory
from agentflow_eval.run.stages import RunMeta, evaluate, new_run_id
from agentflow_eval.run.trial import TrialSettings

__all__ = ["AgentEvaluator", "EvaluationFailed"]


class EvaluationFailed(AssertionError):
    """The pass rate fell below what the test asked for."""

    def __init__(self, run: RunResult, min_pass_rate: float) -> None:
        self.run = run
        super().__init__(
            f"pass rate {run.totals.pass_rate:.0%} below {min_pass_rate:.0%}\n"
            + format_scorecard(run, verbose=True)
        )


class AgentEvaluator:
    """Evaluate an agent on an eval set from Python; see the module docstring."""

    def __init__(
        self,
        agent: AgentUnderTest | str,
        config: EvalConfig | dict[str, Any] | str | Path | None = None,
        *,
        model: str | None = None,
    ) -> None:
        from agentflow_eval.agents.loader import load_agent

        self.agent = load_agent(agent, model=model) if isinstance(agent, str) else agent
        self.config = _config(config)
        # judge verdicts are reused across evaluate() calls of this evaluator
        self.judge_cache = InMemoryJudgeCache()

    async def evaluate(
        self,
        eval_set: EvalSet | str | Path,
        *,
        runs: int | None = None,
        max_concurrency: int = 16,
        timeout_s: float = 120.0,
        output_dir: str | Path | None = None,
        min_pass_rate: float | None = None,
    ) -> RunResult:
        """Run the eval set; raise :class:`EvaluationFailed` below ``min_pass_rate``."""
        config = self.config
        if not isinstance(eval_set, EvalSet):
            from agentflow_eval.files.loading import find_config_for, load_config, load_evalset

            if config is None:
                found = find_config_for(eval_set)
                config = load_config(found) if found else None
            eval_set = load_evalset(eval_set).eval_set
        config = config or EvalConfig.default()
        out = Path(output_dir) if output_dir else Path(tempfile.mkdtemp(prefix="agentflow-eval-"))
        runs = runs or config.runs or 5
        from datetime import UTC, datetime

        meta = RunMeta(
            run_id=new_run_id(),
            agent=self.agent.name,
            started_at=datetime.now(UTC),
            runs_per_case=runs,
        )
        meta.label_models(getattr(self.agent, "model", None), config)
        run = await evaluate(
            self.agent,
            eval_set,
            config,
            output_dir=out,
            runs=runs,
            max_concurrency=max_concurrency,
            settings=TrialSettings(timeout_s=timeout_s),
            turn_source_for=turn_source_factory(config),
            context_extras={"judge": JudgeRuntime(config.judge, cache=self.judge_cache)},
            meta=meta,
        )
        if min_pass_rate is not None and run.totals.pass_rate < min_pass_rate:
            raise EvaluationFailed(run, min_pass_rate)
        return run

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


def _config(config: EvalConfig | dict[str, Any] | str | Path | None) -> EvalConfig | None:
    if config is None or isinstance(config, EvalConfig):
        return config
    if isinstance(config, dict):
        return EvalConfig.model_validate(config)
    from agentflow_eval.files.loading import load_config

    return load_config(config)
