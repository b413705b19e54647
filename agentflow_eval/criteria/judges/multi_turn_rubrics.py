"""``rubric_based_multi_turn_trajectory_quality_v1``: does the agent's conduct over the
whole conversation meet each rubric? (Google ADK's criterion of the same name.)

Rubrics come from the criterion's config, the case, and the case's last turn (as ADK
takes the last invocation's); a narrower level's rubric replaces a wider one's of the
same id, and a case's or a turn's rubric whose ``type`` is another criterion's
(anything but ``TRAJECTORY_QUALITY``) is left to that criterion. The judge is shown the
whole conversation once per sample (every turn's user message, the agent's messages,
its tool calls and their results) with all the rubrics; each rubric's verdict is the
majority of the samples' yes/no (a tie is "no"). The score is the fraction of rubrics
met, in [0, 1] as ADK's (default threshold 0.8, 5 samples).
"""

from __future__ import annotations

from dataclasses import dataclass

from agentflow_eval.criteria.base import CriterionContext, not_evaluated, skipped
from agentflow_eval.criteria.judges.common import (
    Answer,
    DetailRow,
    JudgeAsks,
    JudgeCriterion,
    JudgeSetup,
    Scoring,
    majority,
)
from agentflow_eval.criteria.judges.conversation import conversation_lines
from agentflow_eval.criteria.judges.rubrics import (
    RUBRIC_TYPES,
    RubricOptions,
    RubricVerdict,
    rubric_parser,
)
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import Rubric
from agentflow_eval.models.results import CriterionResult

__all__ = ["MultiTurnRubricCriterion", "MultiTurnRubricOptions", "conversation_rubrics"]

PROMPT_VARIABLES = frozenset({"conversation", "rubrics"})
"""What the prompt template is rendered with (an override may use any of them)."""

RUBRIC_TYPE = RUBRIC_TYPES["multi_turn_trajectory"]


def conversation_rubrics(config_rubrics: list[Rubric], ctx: CriterionContext) -> list[Rubric]:
    """The rubrics of the whole conversation: config, then case, then the last turn's,
    a later level replacing an earlier one's rubric of the same id."""
    last = ctx.case.conversation[-1].rubrics if ctx.case.conversation else []
    merged: dict[str, Rubric] = {}
    for rubric in config_rubrics:
        merged[rubric.rubric_id] = rubric
    for rubric in [*ctx.case.rubrics, *last]:
        if rubric.type is None or rubric.type.upper() == RUBRIC_TYPE:
            merged[rubric.rubric_id] = rubric
    return list(merged.values())


@dataclass
class MultiTurnRubricCriterion(JudgeCriterion):
    """Judges a whole conversation against yes/no rubrics."""

    rubrics: list[Rubric]

    @property
    def label(self) -> str:
        return f"conversation meets rubrics (LLM judge) >= {self.threshold:g}"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        rubrics = conversation_rubrics(self.rubrics, ctx)
        if not rubrics:
            return skipped(
                self,
                "no rubrics to judge: give 'rubrics' in the criterion config or the case",
            )
        turns = ctx.trial.turns
        if not turns:
            return not_evaluated(self, "the trial has no turns to judge")
        row: DetailRow = {
            "invocation_id": turns[-1].invocation_id,
            "turns": len(turns),
            "rubrics": [
                {"rubric_id": r.rubric_id, "rubric_content": r.rubric_content, "votes": []}
                for r in rubrics
            ],
        }
        prompt = self.setup.template.render(conversation=conversation_lines(turns), rubrics=rubrics)
        asks = JudgeAsks(self)
        asks.add(row, prompt, rubric_parser([r.rubric_id for r in rubrics]))
        return await asks.run(ctx.judge, [row], _score_votes)


def _score_votes(rows: list[DetailRow], answers: list[Answer]) -> Scoring:
    """Each rubric met by the majority of its votes; the score is the fraction met."""
    row = rows[0]
    for _, reply in answers:
        for item in row["rubrics"]:
            verdict: RubricVerdict = reply.value[item["rubric_id"]]
            item["votes"].append(
                {"verdict": verdict.verdict, "reasoning": verdict.reasoning, "cached": reply.cached}
            )
    for item in row["rubrics"]:
        votes = [vote["verdict"] == "yes" for vote in item["votes"]]
        item["passed"] = majority(votes)
        yes = sum(votes)
        item["reason"] = f"{yes} yes / {len(votes) - yes} no votes"
    met = [item["passed"] for item in row["rubrics"]]
    failing = [item["rubric_id"] for item in row["rubrics"] if not item["passed"]]
    reason = f"rubrics not met: {', '.join(failing)}" if failing else None
    return Scoring(sum(met) / len(met), reason)


class MultiTurnRubricOptions(RubricOptions):
    """Options of rubric_based_multi_turn_trajectory_quality_v1 (the rubric criteria's)."""


@criterion(
    "rubric_based_multi_turn_trajectory_quality_v1",
    MultiTurnRubricOptions,
    judges=("rubrics",),
    needs_rubrics=True,
    subject="tool_calls",
)
def build_multi_turn_rubrics(
    name: str, options: MultiTurnRubricOptions, config: EvalConfig
) -> MultiTurnRubricCriterion:
    """An LLM judge over the whole conversation: does the agent's conduct meet each
    rubric? (threshold 0.8, 5 samples)."""
    setup = JudgeSetup.resolve(
        options,
        config,
        template="rubric_based_multi_turn_trajectory_quality_v1",
        variables=PROMPT_VARIABLES,
        default_threshold=0.8,
        default_samples=5,
    )
    return MultiTurnRubricCriterion(name=name, setup=setup, rubrics=list(options.rubrics))
