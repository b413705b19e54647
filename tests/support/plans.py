"""Run plans for tests that drive the stages one by one."""

from __future__ import annotations

from pathlib import Path

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.run.plan import RunInputs, RunOptions, RunPlan, plan_run


def make_plan(
    eval_set: EvalSet,
    agent: AgentUnderTest,
    output_dir: Path,
    config: EvalConfig | None = None,
    **options: int | float | None,
) -> RunPlan:
    """A planned run of ``agent`` on ``eval_set`` under ``output_dir``; ``options`` are
    :class:`RunOptions` fields (runs, max_concurrency, trial_timeout_s)."""
    handle = plan_run(
        RunInputs.of(eval_set, config or EvalConfig.default()),
        RunOptions(**options),  # type: ignore[arg-type]
        agent=agent,
        output_dir=output_dir,
    )
    handle.release()  # these tests drive the stages themselves, one process at a time
    return handle.plan
