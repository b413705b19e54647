"""``node_trajectory_avg_score``: did the agent take the expected steps — graph nodes,
agents, sub-agents — in each turn? The steps are the turn's node events (what a
framework adapter records: LangGraph's nodes with their subgraphs, ADK's agents, the
Agents SDK's agents in handoff order, Pydantic AI's agent runs), matched against the
turn's ``expected_nodes`` with the match types and scoring of
``tool_trajectory_avg_score`` (EXACT, IN_ORDER, ANY_ORDER; partial credit or all or
nothing). An expected step names a node (``summarize``) or a node with the subgraphs or
parent agents that hold it, outermost first (``research/summarize``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import field_validator

from agentflow_eval.criteria.base import CriterionContext, scored, skipped, threshold_of
from agentflow_eval.criteria.invocations import paired_turns
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.criteria.trajectory import (
    _ADK_MATCH_TYPES,
    _MATCH_TYPE_SCHEMA,
    MATCH_TYPES,
    SCORINGS,
    MatchType,
    TrajectoryScoring,
    match_invocation,
)
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import CriterionResult, NodeEvent

__all__ = ["NodeTrajectoryCriterion", "NodeTrajectoryOptions", "Step"]


@dataclass(frozen=True)
class Step:
    """A step as the trajectory matcher compares it: its name, and no arguments."""

    name: str
    path: tuple[str, ...] = ()
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def qualified(self) -> str:
        return "/".join((*self.path, self.name))

    @classmethod
    def of(cls, node: NodeEvent) -> Step:
        return cls(node.name, tuple(node.path))


def same_step(expected: Any, actual: Any) -> bool:
    """An expected step (a name, or a ``parent/name`` path) answers an actual one when it
    names it, alone or with the steps that hold it (outermost first)."""
    written: str = expected.name
    if "/" not in written:
        return bool(written == actual.name)
    qualified: str = actual.qualified
    return qualified == written or qualified.endswith("/" + written)


class NodeTrajectoryOptions(CriterionOptions):
    """Options of node_trajectory_avg_score."""

    match_type: Annotated[MatchType, _MATCH_TYPE_SCHEMA] = "EXACT"
    """EXACT (the same steps, in order, nothing extra), IN_ORDER (the expected steps in
    order, others allowed between) or ANY_ORDER."""
    scoring: TrajectoryScoring = "partial"
    """Partial credit per turn, or all or nothing."""

    @field_validator("match_type", mode="before")
    @classmethod
    def _spelling(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return _ADK_MATCH_TYPES.get(value, value)
        if isinstance(value, str):
            return value.strip().upper().replace("-", "_").replace(" ", "_")
        return value


@dataclass
class NodeTrajectoryCriterion:
    """Scores the steps the agent took against each turn's expected ones."""

    name: str
    threshold: float
    match_type: str = "EXACT"
    scoring: str = "partial"
    label: str = field(init=False, default="")

    def __post_init__(self) -> None:
        if self.match_type not in MATCH_TYPES or self.scoring not in SCORINGS:
            raise ValueError(f"node trajectory: unknown {self.match_type!r} or {self.scoring!r}")
        self.label = f"steps {self.match_type}" + (
            ", all-or-nothing" if self.scoring == "all_or_nothing" else ""
        )

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        turns = [
            (invocation, turn)
            for invocation, turn in paired_turns(ctx.case, ctx.trial)
            if invocation.expected_nodes or "expected_nodes" in invocation.model_fields_set
        ]
        if not turns:
            return skipped(self, f"case {ctx.case.eval_id!r} gives no expected_nodes for any turn")
        rows: list[dict[str, Any]] = []
        problems: list[str] = []
        for invocation, turn in turns:
            expected = [Step(name) for name in invocation.expected_nodes]
            actual = [Step.of(node) for node in turn.nodes] if turn is not None else []
            result = match_invocation(
                expected,
                actual,
                match_type=self.match_type,
                matcher=same_step,
                scoring=self.scoring,
            )
            note: str | None = result.note
            result_score = result.score
            if turn is None:
                result_score, note = 0.0, "no turn recorded (the trial ended)"
            rows.append(
                {
                    "invocation_id": invocation.invocation_id,
                    "expected": list(invocation.expected_nodes),
                    "actual": [step.qualified for step in actual],
                    "matched": result.matched,
                    "score": result_score,
                    **({"note": note} if note else {}),
                }
            )
            if result_score < 1.0:
                problems.append(
                    f"{invocation.invocation_id}: expected {' → '.join(invocation.expected_nodes)}"
                    f", took {' → '.join(step.qualified for step in actual) or 'no step'}"
                )
        score = sum(row["score"] for row in rows) / len(rows)
        details = {"match_type": self.match_type, "scoring": self.scoring, "invocations": rows}
        return scored(self, score, details, reason="; ".join(problems) or None)


@criterion(
    "node_trajectory_avg_score",
    NodeTrajectoryOptions,
    judges=("expected_nodes",),
    subject="tool_calls",
)
def build_node_trajectory(
    name: str, options: NodeTrajectoryOptions, config: EvalConfig
) -> NodeTrajectoryCriterion:
    """The steps taken (graph nodes, agents, sub-agents) against each turn's expected
    ones (default threshold 1.0)."""
    return NodeTrajectoryCriterion(
        name=name,
        threshold=threshold_of(options, 1.0),
        match_type=options.match_type,
        scoring=options.scoring,
    )
