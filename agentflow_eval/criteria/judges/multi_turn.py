"""ADK's reference-free multi-turn metrics: ``multi_turn_task_success_v1`` (did the agent
achieve what the user wanted?), ``multi_turn_trajectory_quality_v1`` (was the path it
took a good one?) and ``multi_turn_tool_use_quality_v1`` (did it use its tools well?).

ADK has Vertex AI compute them with adaptive rubrics: the judge first writes the
properties a good conversation has in that respect, then decides each one. Here any
LiteLLM judge does the same: it is shown the whole conversation once (every turn's user
message, the agent's messages, its tool calls and their results) and what the user set
out to do (a scenario's conversation plan; for a scripted case, the user's messages say
it), lists the properties, and answers yes or no for each. A sample's score is the
fraction of its properties met; with ``num_samples`` > 1 (default 1, as ADK asks Vertex
once) the score is the mean of the samples' scores, in [0, 1] as ADK's (default
threshold 0.8). A trial without turns is not evaluated.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from agentflow_eval.criteria.base import CriterionContext, not_evaluated
from agentflow_eval.criteria.judges.common import (
    Answer,
    DetailRow,
    JudgeAsks,
    JudgeCriterion,
    JudgeSetup,
    Scoring,
    YesNo,
)
from agentflow_eval.criteria.judges.conversation import conversation_lines
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.criteria.judges.runtime import parse_json_reply
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import CriterionResult

__all__ = [
    "MULTI_TURN_ASPECTS",
    "JudgedProperty",
    "MultiTurnCriterion",
    "PropertyVerdicts",
    "parse_properties",
]

PROMPT_VARIABLES = frozenset({"user_goal", "conversation"})
"""What the prompt templates are rendered with (an override may use any of them)."""

Aspect = Literal["task_success", "trajectory_quality", "tool_use_quality"]

MULTI_TURN_ASPECTS: dict[Aspect, str] = {
    "task_success": "conversation achieved the user's goals",
    "trajectory_quality": "conversation took a good path",
    "tool_use_quality": "tools used well over the conversation",
}
"""What each metric judges, as its label says it."""


class JudgedProperty(BaseModel):
    """One property the judge wrote, and its verdict on it."""

    property: str = Field(min_length=1)
    reasoning: str = ""
    verdict: YesNo


class PropertyVerdicts(BaseModel):
    """What the judge answers for one sample: at least one property, each decided."""

    properties: list[JudgedProperty] = Field(min_length=1)

    @property
    def score(self) -> float:
        return sum(1 for p in self.properties if p.verdict == "yes") / len(self.properties)


def parse_properties(content: str) -> PropertyVerdicts:
    return parse_json_reply(content, PropertyVerdicts)


def user_goal(ctx: CriterionContext) -> str:
    """What the user set out to do: a scenario's plan, else the note that the user's
    messages say it."""
    scenario = ctx.case.conversation_scenario
    if scenario is not None and scenario.conversation_plan:
        return scenario.conversation_plan
    return "(not written down: the user's messages in the conversation state it)"


@dataclass
class MultiTurnCriterion(JudgeCriterion):
    """Judges a whole conversation once, on adaptive properties of one aspect."""

    aspect: Aspect = "task_success"

    @property
    def label(self) -> str:
        return f"{MULTI_TURN_ASPECTS[self.aspect]} (LLM judge) >= {self.threshold:g}"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        turns = ctx.trial.turns
        if not turns:
            return not_evaluated(self, "the trial has no turns to judge")
        row: DetailRow = {"invocation_id": turns[-1].invocation_id, "turns": len(turns)}
        prompt = self.setup.template.render(
            user_goal=user_goal(ctx), conversation=conversation_lines(turns)
        )
        asks = JudgeAsks(self)
        threshold = self.threshold
        asks.add(row, prompt, parse_properties, lambda value: value.score >= threshold)
        return await asks.run(ctx.judge, [row], _score_samples)


def _score_samples(rows: list[DetailRow], answers: list[Answer]) -> Scoring:
    """Each sample's score is the fraction of its properties met; the score is their
    mean."""
    row = rows[0]
    samples: list[DetailRow] = []
    for _, reply in answers:
        verdicts: PropertyVerdicts = reply.value
        samples.append(
            {
                "score": verdicts.score,
                "properties": [p.model_dump() for p in verdicts.properties],
                "cached": reply.cached,
            }
        )
    row["samples"] = samples
    score = statistics.fmean(float(sample["score"]) for sample in samples)
    unmet = sorted(
        {p["property"] for s in samples for p in s["properties"] if p["verdict"] == "no"}
    )
    return Scoring(score, f"not met: {'; '.join(unmet)}" if unmet else None)


def _build(
    name: str, options: JudgeCriterionOptions, config: EvalConfig, aspect: Aspect
) -> MultiTurnCriterion:
    setup = JudgeSetup.resolve(
        options,
        config,
        template=f"multi_turn_{aspect}_v1",
        variables=PROMPT_VARIABLES,
        default_threshold=0.8,
        default_samples=1,
    )
    return MultiTurnCriterion(name=name, setup=setup, aspect=aspect)


@criterion("multi_turn_task_success_v1", JudgeCriterionOptions)
def build_task_success(
    name: str, options: JudgeCriterionOptions, config: EvalConfig
) -> MultiTurnCriterion:
    """An LLM judge over the whole conversation: did the agent achieve each of the
    user's goals? (ADK's adaptive-rubric metric; threshold 0.8, 1 sample)."""
    return _build(name, options, config, "task_success")


@criterion("multi_turn_trajectory_quality_v1", JudgeCriterionOptions, subject="tool_calls")
def build_trajectory_quality(
    name: str, options: JudgeCriterionOptions, config: EvalConfig
) -> MultiTurnCriterion:
    """An LLM judge over the whole conversation: was the agent's path to the goal a good
    one? (ADK's adaptive-rubric metric; threshold 0.8, 1 sample)."""
    return _build(name, options, config, "trajectory_quality")


@criterion("multi_turn_tool_use_quality_v1", JudgeCriterionOptions, subject="tool_calls")
def build_tool_use_quality(
    name: str, options: JudgeCriterionOptions, config: EvalConfig
) -> MultiTurnCriterion:
    """An LLM judge over the whole conversation: did the agent call the right tools,
    with the right arguments, and use their results? (ADK's adaptive-rubric metric;
    threshold 0.8, 1 sample)."""
    return _build(name, options, config, "tool_use_quality")
