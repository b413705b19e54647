"""What the results say about the run itself: its id, the agent and models it ran with,
whether they were simulated, its identity and notes. Decided once, when the run is
planned."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from agentflow_eval.criteria.registry import judge_model, known_llm_criteria
from agentflow_eval.demo.names import is_demo_model
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import PairedWith, RejudgedFrom

__all__ = ["RunMeta", "is_simulated", "judge_model_of", "models_named"]


@dataclass(frozen=True)
class RunMeta:
    """What the results say about the run itself."""

    run_id: str
    agent: str
    started_at: datetime
    runs_per_case: int
    agent_model: str | None = None
    judge_model: str | None = None
    simulated: bool = False
    """Whether the agent's or the judges' model is the offline demo model (then every
    report says the results are simulated)."""
    count_infrastructure_errors: bool = False
    """Whether trials the provider failed count against the pass rate (by default they are
    reported apart and left out)."""
    notes: tuple[str, ...] = ()
    agent_version: str | None = None
    git_sha: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    rejudged_from: RejudgedFrom | None = None
    """For a run that judges an earlier run's stored trials again: that run."""
    clock_start: float = field(default_factory=time.monotonic)
    """This session's start on the monotonic clock (the wall clock may step: an NTP fix,
    a resume on a machine whose clock is behind)."""
    earlier_s: float = 0.0
    """Time the earlier sessions of a resumed run spent (from its ``run.json``)."""

    agent_spec: str | None = None
    """What the agent was loaded from, when the run was started from parameters."""
    track: str | None = None
    """The history the run joins (see :data:`agentflow_eval.models.defaults.TRACK`)."""
    paired_with: PairedWith | None = None
    """For one side of a paired run: the other side's run."""

    def elapsed_s(self) -> float:
        """Time the run has spent so far: the earlier sessions' and this one's, on the
        monotonic clock — never negative, whatever the wall clock did."""
        return self.earlier_s + max(0.0, time.monotonic() - self.clock_start)


def judge_model_of(config: EvalConfig) -> str | None:
    """The judge model of a run, if any criterion uses an LLM judge: the criteria's own
    model when they agree on one, else the run-wide default."""
    judged = [name for name in config.criteria if name in known_llm_criteria()]
    if not judged:
        return None
    own = {judge_model(name, config.criteria[name]) for name in judged} - {None}
    return own.pop() if len(own) == 1 else config.judge.model


def models_named(config: EvalConfig, agent_model: str | None = None) -> list[str | None]:
    """Every model a run with ``config`` names: the agent's, the run-wide judge's, each
    LLM-judge criterion's own, and the simulated user's."""
    judges = [
        judge_model(name, options)
        for name, options in config.criteria.items()
        if name in known_llm_criteria()
    ]
    simulator = config.user_simulator_config
    return [
        agent_model,
        config.judge.model,
        *judges,
        simulator.model if simulator is not None else None,
    ]


def is_simulated(agent_model: str | None, judge_model: str | None) -> bool:
    """Whether a run with these models measures the offline demo model, not an LLM."""
    return is_demo_model(agent_model) or is_demo_model(judge_model)
