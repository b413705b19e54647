"""``response_evaluation_score``: how coherent are the agent's answers, from 1 to 5?
(Google ADK's metric of the same name, which ADK has Vertex AI's coherence metric
compute; here any LiteLLM judge rates it.)

Each turn's answer is shown to the judge with the user's message, ``num_samples`` times
(default 1, as ADK asks Vertex once); the turn's rating is the median of the samples'
ratings. A turn the agent did not answer is rated 1 without asking. The score is the
mean rating over the turns, on ADK's scale of 1 to 5 (not 0 to 1), and so is the
threshold (default 4: mostly coherent).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, Field

from agentflow_eval.criteria.base import CriterionContext, not_evaluated
from agentflow_eval.criteria.judges.common import (
    Answer,
    DetailRow,
    JudgeAsks,
    JudgeCriterion,
    JudgeSetup,
    Scoring,
    turn_views,
)
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.criteria.judges.runtime import parse_json_reply
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import CriterionResult

__all__ = ["CoherenceCriterion", "CoherenceOptions", "CoherenceRating", "parse_coherence"]

PROMPT_VARIABLES = frozenset({"user_prompt", "response"})
"""What the prompt template is rendered with (an override may use any of them)."""

LOWEST, HIGHEST = 1.0, 5.0


class CoherenceRating(BaseModel):
    """What the judge answers for one sample."""

    reasoning: str = ""
    rating: int = Field(ge=1, le=5)


def parse_coherence(content: str) -> CoherenceRating:
    return parse_json_reply(content, CoherenceRating)


@dataclass
class CoherenceCriterion(JudgeCriterion):
    """Rates each answer's coherence from 1 to 5."""

    SCORE_RANGE: ClassVar[tuple[float, float]] = (LOWEST, HIGHEST)

    @property
    def label(self) -> str:
        return f"answers coherent (LLM judge, 1-5) >= {self.threshold:g}"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        rows: list[DetailRow] = []
        asks = JudgeAsks(self)
        for view in turn_views(ctx):
            if view.turn is None:
                continue
            row: DetailRow = {"invocation_id": view.invocation_id, "votes": []}
            rows.append(row)
            if not view.final_response:
                row.update(rating=LOWEST, reason="no answer for this turn")
                continue
            prompt = self.setup.template.render(
                user_prompt=view.user_text, response=view.final_response
            )
            asks.add(row, prompt, parse_coherence, _rating)
        if not rows:
            return not_evaluated(self, "the trial has no turn to rate")
        return await asks.run(ctx.judge, rows, _score_ratings)


def _rating(value: CoherenceRating) -> int:
    return value.rating


def _score_ratings(rows: list[DetailRow], answers: list[Answer]) -> Scoring:
    """Each turn rated by the median of its samples; the score is the mean over turns."""
    for row, reply in answers:
        rating: CoherenceRating = reply.value
        row["votes"].append(
            {"rating": rating.rating, "reasoning": rating.reasoning, "cached": reply.cached}
        )
    for row in rows:
        if "rating" not in row:
            row["rating"] = float(statistics.median(v["rating"] for v in row["votes"]))
    score = statistics.fmean(row["rating"] for row in rows)
    low = [f"{row['invocation_id']} ({row['rating']:g})" for row in rows if row["rating"] < 3]
    return Scoring(score, f"rated incoherent: {', '.join(low)}" if low else None)


class CoherenceOptions(JudgeCriterionOptions):
    """Options of response_evaluation_score: its threshold is on ADK's scale of 1 to 5."""

    threshold: float | None = Field(default=None, ge=LOWEST, le=HIGHEST)
    """A trial passes at a mean rating >= threshold (1 to 5; default 4)."""


@criterion("response_evaluation_score", CoherenceOptions)
def build_coherence(name: str, options: CoherenceOptions, config: EvalConfig) -> CoherenceCriterion:
    """An LLM judge: how coherent is each answer, from 1 to 5? (ADK's scale; threshold
    4, 1 sample)."""
    setup = JudgeSetup.resolve(
        options,
        config,
        template="response_evaluation_score",
        variables=PROMPT_VARIABLES,
        default_threshold=4.0,
        default_samples=1,
    )
    return CoherenceCriterion(name=name, setup=setup)
