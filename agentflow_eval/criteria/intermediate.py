"""``intermediate_response_match_score``: ROUGE-1 of what the agent said on its way to the
answer (text that came with its tool calls, a sub-agent's progress messages) against the
case's ``expected_intermediate_responses``, averaged over the invocations that have some.

Per invocation, the expected intermediate responses and the agent's are each joined one
per line and compared as :func:`~agentflow_eval.criteria.response.rouge1` compares final
answers (Google ADK 2.13's tokenization, so the score is right in any script). A turn the
trial never reached scores 0; a case without expected intermediate responses is skipped.
The default threshold is 0.8, as for ``response_match_score``.

Google ADK has no criterion of its own for these responses; its LLM judges can read them
with the final answer (``include_intermediate_responses_in_final``, supported by
``final_response_match_v2`` and ``rubric_based_final_response_quality_v1`` here too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentflow_eval.criteria.base import CriterionContext, skipped, threshold_of
from agentflow_eval.criteria.invocations import paired_turns
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.response import rouge1, rouge_row, scored_rows
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import CriterionResult

__all__ = ["IntermediateResponseMatchCriterion"]


@dataclass
class IntermediateResponseMatchCriterion:
    """Scores intermediate responses by ROUGE-1 overlap with the expected ones."""

    name: str
    threshold: float
    label: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.label = f"intermediate responses ROUGE-1 >= {self.threshold:g}"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        rows: list[dict[str, Any]] = []
        for invocation, turn in paired_turns(ctx.case, ctx.trial):
            expected = [m.text for m in invocation.expected_intermediate_responses if m.text]
            if not expected:
                continue
            reference = "\n".join(expected)
            actual = [text for text in turn.intermediate_responses if text] if turn else []
            value = rouge1("\n".join(actual), reference)
            row = rouge_row(invocation.invocation_id, expected, actual, value)
            rows.append({**row, "missing_turn": turn is None})
        if not rows:
            return skipped(
                self,
                f"case {ctx.case.eval_id!r} has no expected intermediate responses to "
                "compare against",
            )
        missing = [row["invocation_id"] for row in rows if row["missing_turn"]]
        return scored_rows(
            self, rows, f"no turn recorded for {', '.join(missing)}" if missing else None
        )


@criterion(
    "intermediate_response_match_score",
    CriterionOptions,
    judges=("expected_intermediate_responses",),
)
def build_intermediate_response_match(
    name: str, options: CriterionOptions, config: EvalConfig
) -> IntermediateResponseMatchCriterion:
    """Word overlap (ROUGE-1) of what the agent said on its way to each answer with the
    expected intermediate responses (default threshold 0.8)."""
    return IntermediateResponseMatchCriterion(name=name, threshold=threshold_of(options, 0.8))
