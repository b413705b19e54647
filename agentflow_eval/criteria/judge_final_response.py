"""``final_response_match_v2``: does the agent's final answer say what the reference
answer says, in any words? (seed 001 §3.3, Google ADK's criterion of the same name.)

For each invocation with an expected final response, the judge is asked ``num_samples``
times (default 5, as ADK) whether the answer is "valid" against the reference; the
invocation's verdict is the majority. A tie is "invalid": an undecided judge does not pass
an answer. An invocation the agent never answered is invalid without asking the judge.
The score is the fraction of invocations judged valid (default threshold 0.8).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from agentflow_eval.config import CriterionConfig, EvalConfig
from agentflow_eval.criteria.base import CriterionContext, not_evaluated, scored, skipped
from agentflow_eval.criteria.judge_common import (
    NO_JUDGE_RUNTIME,
    JudgeSetup,
    ask_all,
    majority,
    turn_views,
)
from agentflow_eval.criteria.registry import register
from agentflow_eval.judge import JudgeRequest, parse_json_reply
from agentflow_eval.results import CriterionResult

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
class FinalResponseMatchCriterion:
    """Judges final answers for semantic agreement with the expected final responses."""

    name: str
    setup: JudgeSetup

    @property
    def threshold(self) -> float:
        return self.setup.threshold

    @property
    def label(self) -> str:
        return f"answer matches reference (LLM judge) >= {self.threshold:g}"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        if ctx.case.conversation_scenario is not None:
            return skipped(
                self,
                f"case {ctx.case.eval_id!r} is a conversation_scenario (simulated user): "
                "it has no expected final responses to compare against",
            )
        rows: list[dict[str, Any]] = []
        asks: list[tuple[JudgeRequest, Any]] = []
        owners: list[int] = []
        for view in turn_views(ctx):
            expected = view.invocation.expected_final_response if view.invocation else None
            reference = expected.text if expected is not None else ""
            if not reference:
                continue
            row: dict[str, Any] = {
                "invocation_id": view.invocation_id,
                "expected": reference,
                "actual": view.final_response,
            }
            rows.append(row)
            if view.final_response is None:
                row.update(valid=False, votes=[], reason="no final response for this invocation")
                continue
            prompt = self.setup.template.render(
                user_prompt=view.user_text, reference=reference, response=view.final_response
            )
            for request in self.setup.requests(self.name, prompt):
                asks.append((request, parse_match_verdict))
                owners.append(len(rows) - 1)
        if not rows:
            return skipped(
                self,
                f"case {ctx.case.eval_id!r} has no invocation with an expected final "
                "response text to compare against",
            )
        if asks and ctx.judge is None:
            return not_evaluated(self, NO_JUDGE_RUNTIME)
        batch = await ask_all(ctx.judge, asks)
        details: dict[str, Any] = {**self.setup.details(), "invocations": rows}
        if batch.failed:
            return batch.not_evaluated(self, details)
        for owner, reply in zip(owners, batch.replies, strict=True):
            assert reply is not None
            row = rows[owner]
            row.setdefault("votes", []).append(
                {
                    "verdict": reply.value.verdict,
                    "reasoning": reply.value.reasoning,
                    "cached": reply.cached,
                }
            )
        for row in rows:
            if "valid" not in row:
                votes = [vote["verdict"] == "valid" for vote in row["votes"]]
                row["valid"] = majority(votes)
                row["reason"] = _vote_reason(votes)
        score = sum(1 for row in rows if row["valid"]) / len(rows)
        invalid = [row["invocation_id"] for row in rows if not row["valid"]]
        reason = f"judged invalid: {', '.join(invalid)}" if invalid else None
        details.update(batch.summary())
        return scored(
            self, score, details, reason=reason, usage=batch.usage, latency_ms=batch.latency_ms
        )


def _vote_reason(votes: list[bool]) -> str:
    valid = sum(votes)
    invalid = len(votes) - valid
    outcome = "valid" if valid > invalid else "invalid" + (" (tie)" if valid == invalid else "")
    return f"{valid} valid / {invalid} invalid votes: {outcome}"


@register("final_response_match_v2")
def build_final_response_match(
    name: str, options: CriterionConfig, config: EvalConfig
) -> FinalResponseMatchCriterion:
    """``final_response_match_v2`` from its config entry (threshold 0.8, 5 samples)."""
    setup = JudgeSetup.resolve(
        options,
        config,
        template="final_response_match_v2",
        variables=PROMPT_VARIABLES,
        default_threshold=0.8,
        default_samples=5,
    )
    return FinalResponseMatchCriterion(name=name, setup=setup)
