"""``final_response_match_v2``: does the agent's final answer say what the reference
answer says, in any words? (Google ADK's criterion of the same name.)

For each invocation with an expected final response, the judge is asked ``num_samples``
times (default 5, as ADK) whether the answer is "valid" against the reference; the
invocation's verdict is the majority. A tie is "invalid": an undecided judge does not pass
an answer. An invocation the agent never answered is invalid without asking the judge.
The score is the fraction of invocations judged valid (default threshold 0.8).

With ``include_intermediate_responses_in_final`` (as in ADK), the judge sees each turn's
intermediate responses followed by its final one, for the answer and the reference alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from agentflow_eval.criteria.base import CriterionContext, skipped
from agentflow_eval.criteria.invocations import actual_text, expected_text
from agentflow_eval.criteria.judges.common import (
    Answer,
    DetailRow,
    JudgeAsks,
    JudgeCriterion,
    JudgeSetup,
    Scoring,
    majority,
    turn_views,
)
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.criteria.judges.runtime import parse_json_reply
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import CriterionResult

__all__ = ["FinalResponseMatchCriterion", "MatchVerdict", "parse_match_verdict"]

PROMPT_VARIABLES = frozenset({"user_prompt", "reference", "response"})
"""What the prompt template is rendered with (an override may use any of them)."""


class MatchVerdict(BaseModel):
    """What the judge answers for one sample."""

    reasoning: str = ""
    verdict: Literal["valid", "invalid"]

    @field_validator("verdict", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


def parse_match_verdict(content: str) -> MatchVerdict:
    return parse_json_reply(content, MatchVerdict)


@dataclass
class FinalResponseMatchCriterion(JudgeCriterion):
    """Judges final answers for semantic agreement with the expected final responses."""

    include_intermediate: bool = False

    @property
    def label(self) -> str:
        what = "answer" if not self.include_intermediate else "answer with intermediate responses"
        return f"{what} matches reference (LLM judge) >= {self.threshold:g}"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        if ctx.case.conversation_scenario is not None:
            return skipped(
                self,
                f"case {ctx.case.eval_id!r} is a conversation_scenario (simulated user): "
                "it has no expected final responses to compare against",
            )
        rows: list[DetailRow] = []
        asks = JudgeAsks(self)
        include = self.include_intermediate
        for view in turn_views(ctx):
            reference = (
                expected_text(view.invocation, include_intermediate=include)
                if view.invocation is not None
                else None
            )
            if not reference:
                continue
            answer = (
                actual_text(view.turn, include_intermediate=include)
                if view.final_response is not None
                else None
            )
            row: DetailRow = {
                "invocation_id": view.invocation_id,
                "expected": reference,
                "actual": answer,
            }
            rows.append(row)
            if answer is None:
                row.update(valid=False, votes=[], reason="no final response for this invocation")
                continue
            prompt = self.setup.template.render(
                user_prompt=view.user_text, reference=reference, response=answer
            )
            asks.add(row, prompt, parse_match_verdict)
        if not rows:
            return skipped(
                self,
                f"case {ctx.case.eval_id!r} has no invocation with an expected final "
                "response text to compare against",
            )
        return await asks.run(ctx.judge, rows, _score_votes)


def _score_votes(rows: list[DetailRow], answers: list[Answer]) -> Scoring:
    """Each invocation valid by the majority of its votes; the score is the fraction valid."""
    for row, reply in answers:
        verdict: MatchVerdict = reply.value
        row.setdefault("votes", []).append(
            {"verdict": verdict.verdict, "reasoning": verdict.reasoning, "cached": reply.cached}
        )
    for row in rows:
        if "valid" not in row:
            votes = [vote["verdict"] == "valid" for vote in row["votes"]]
            row["valid"] = majority(votes)
            row["reason"] = _vote_reason(votes)
    score = sum(1 for row in rows if row["valid"]) / len(rows)
    invalid = [row["invocation_id"] for row in rows if not row["valid"]]
    return Scoring(score, f"judged invalid: {', '.join(invalid)}" if invalid else None)


def _vote_reason(votes: list[bool]) -> str:
    valid = sum(votes)
    invalid = len(votes) - valid
    outcome = "valid" if valid > invalid else "invalid" + (" (tie)" if valid == invalid else "")
    return f"{valid} valid / {invalid} invalid votes: {outcome}"


@criterion(
    "final_response_match_v2",
    JudgeCriterionOptions,
    judges=("expected_final_response",),
    intermediate_in_final=True,
)
def build_final_response_match(
    name: str, options: JudgeCriterionOptions, config: EvalConfig
) -> FinalResponseMatchCriterion:
    """An LLM judge: does each turn's answer say what its reference says? (threshold
    0.8, 5 samples)."""
    setup = JudgeSetup.resolve(
        options,
        config,
        template="final_response_match_v2",
        variables=PROMPT_VARIABLES,
        default_threshold=0.8,
        default_samples=5,
    )
    return FinalResponseMatchCriterion(
        name=name,
        setup=setup,
        include_intermediate=options.include_intermediate_responses_in_final,
    )
