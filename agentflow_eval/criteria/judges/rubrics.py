"""``rubric_based_final_response_quality_v1`` and ``rubric_based_tool_use_quality_v1``:
yes/no rubrics judged by an LLM (Google ADK's criteria of the same names).

Rubrics (``{rubric_id, rubric_content}``) come from the criterion's config and the case,
which apply to every turn, and from each invocation, which apply to that turn; a rubric
id given at a narrower level replaces the same id from a wider one. Each turn is shown to
the judge once per sample with all its rubrics; each rubric's verdict for the turn is the
majority of the samples' yes/no (a tie is "no"). A turn the trial never reached gets "no"
for every rubric without asking the judge. The score is the mean over (turn, rubric) of
the verdicts (default threshold 0.8, 5 samples, as ADK).

The two criteria differ only in their prompt: the first judges the final answer, the
second the tool calls (names, arguments, order, use of results). A case's or an
invocation's rubric with a ``type`` (ADK's ``FINAL_RESPONSE_QUALITY`` or
``TOOL_USE_QUALITY``) is judged only by the criterion of that kind; an untyped one by both.
With ``include_intermediate_responses_in_final`` (as in ADK), the answer judged is the
turn's intermediate responses followed by its final one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from agentflow_eval.criteria.base import CriterionContext, skipped
from agentflow_eval.criteria.invocations import actual_text
from agentflow_eval.criteria.judges.common import (
    Answer,
    DetailRow,
    JudgeAsks,
    JudgeCriterion,
    JudgeSetup,
    Scoring,
    TurnView,
    YesNo,
    majority,
    tool_calls_text,
    turn_views,
)
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.criteria.judges.runtime import JudgeOutputError, parse_json_reply
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import Rubric
from agentflow_eval.models.results import CriterionResult

__all__ = [
    "RUBRIC_TYPES",
    "RubricCriterion",
    "RubricOptions",
    "RubricVerdict",
    "RubricVerdicts",
    "rubric_parser",
    "rubrics_for",
]

PROMPT_VARIABLES = frozenset({"user_prompt", "tool_calls", "response", "rubrics"})
"""What the prompt template is rendered with (an override may use any of them)."""


class RubricVerdict(BaseModel):
    """The judge's verdict on one rubric in one sample."""

    rubric_id: str
    reasoning: str = ""
    verdict: YesNo


class RubricVerdicts(BaseModel):
    """What the judge answers for one sample: a verdict per rubric."""

    verdicts: list[RubricVerdict]


def rubric_parser(rubric_ids: list[str]) -> Callable[[str], dict[str, RubricVerdict]]:
    """A parser that accepts a reply only when it has exactly one verdict for each of
    ``rubric_ids``."""
    expected = set(rubric_ids)

    def parse(content: str) -> dict[str, RubricVerdict]:
        reply = parse_json_reply(content, RubricVerdicts)
        by_id: dict[str, RubricVerdict] = {}
        for verdict in reply.verdicts:
            if verdict.rubric_id in by_id:
                raise JudgeOutputError(f"rubric {verdict.rubric_id!r} has two verdicts")
            by_id[verdict.rubric_id] = verdict
        missing = sorted(expected - by_id.keys())
        unknown = sorted(by_id.keys() - expected)
        if missing or unknown:
            raise JudgeOutputError(
                f"expected one verdict for each of the rubric ids {sorted(expected)}; "
                f"missing {missing}, unknown {unknown}"
            )
        return by_id

    return parse


RUBRIC_TYPES: dict[str, str] = {
    "final_response": "FINAL_RESPONSE_QUALITY",
    "tool_use": "TOOL_USE_QUALITY",
    "multi_turn_trajectory": "TRAJECTORY_QUALITY",
}
"""ADK's rubric ``type`` for each kind of rubric criterion."""


def rubrics_for(
    config_rubrics: list[Rubric],
    ctx: CriterionContext,
    view: TurnView,
    rubric_type: str | None = None,
) -> list[Rubric]:
    """The rubrics that apply to one turn: config, then case, then invocation rubrics,
    a later level replacing an earlier one's rubric of the same id. With ``rubric_type``,
    case and invocation rubrics of another type are left out."""
    merged: dict[str, Rubric] = {}
    invocation_rubrics = view.invocation.rubrics if view.invocation is not None else []
    own = [
        rubric
        for rubric in [*ctx.case.rubrics, *invocation_rubrics]
        if rubric_type is None or rubric.type is None or rubric.type.upper() == rubric_type
    ]
    for rubric in [*config_rubrics, *own]:
        merged[rubric.rubric_id] = rubric
    return list(merged.values())


@dataclass
class RubricCriterion(JudgeCriterion):
    """Judges turns against yes/no rubrics; ``subject`` says what is judged."""

    rubrics: list[Rubric]
    subject: Literal["final_response", "tool_use"]
    include_intermediate: bool = False

    @property
    def label(self) -> str:
        what = "answer" if self.subject == "final_response" else "tool use"
        return f"{what} meets rubrics (LLM judge) >= {self.threshold:g}"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        rows: list[DetailRow] = []
        asks = JudgeAsks(self)
        for view in turn_views(ctx):
            rubrics = rubrics_for(self.rubrics, ctx, view, RUBRIC_TYPES[self.subject])
            if not rubrics:
                continue
            row: DetailRow = {
                "invocation_id": view.invocation_id,
                "rubrics": [
                    {"rubric_id": r.rubric_id, "rubric_content": r.rubric_content, "votes": []}
                    for r in rubrics
                ],
            }
            rows.append(row)
            if view.turn is None:
                for item in row["rubrics"]:
                    item.update(passed=False, reason="the trial never reached this turn")
                continue
            prompt = self.setup.template.render(
                user_prompt=view.user_text,
                tool_calls=tool_calls_text(view.turn.tool_calls),
                response=actual_text(view.turn, include_intermediate=self.include_intermediate)
                or "(no final response)",
                rubrics=rubrics,
            )
            asks.add(row, prompt, rubric_parser([r.rubric_id for r in rubrics]))
        if not rows:
            return skipped(
                self,
                "no rubrics to judge: give 'rubrics' in the criterion config, the case or "
                "its invocations",
            )
        return await asks.run(ctx.judge, rows, _score_votes)


def _score_votes(rows: list[DetailRow], answers: list[Answer]) -> Scoring:
    """Each rubric of each turn met by the majority of its votes; the score is the
    fraction met."""
    for row, reply in answers:
        for item in row["rubrics"]:
            verdict: RubricVerdict = reply.value[item["rubric_id"]]
            item["votes"].append(
                {"verdict": verdict.verdict, "reasoning": verdict.reasoning, "cached": reply.cached}
            )
    verdicts: list[bool] = []
    for row in rows:
        for item in row["rubrics"]:
            if "passed" not in item:
                votes = [vote["verdict"] == "yes" for vote in item["votes"]]
                item["passed"] = majority(votes)
                yes = sum(votes)
                item["reason"] = f"{yes} yes / {len(votes) - yes} no votes"
            verdicts.append(item["passed"])
    failing = sorted(
        {item["rubric_id"] for row in rows for item in row["rubrics"] if not item["passed"]}
    )
    reason = f"rubrics not met: {', '.join(failing)}" if failing else None
    return Scoring(sum(verdicts) / len(verdicts), reason)


class RubricOptions(JudgeCriterionOptions):
    """Options of the rubric criteria."""

    rubrics: list[Rubric] = Field(default_factory=list)
    """Rubrics for every case (cases and turns add their own)."""


def _build(
    name: str,
    options: RubricOptions,
    config: EvalConfig,
    subject: Literal["final_response", "tool_use"],
) -> RubricCriterion:
    setup = JudgeSetup.resolve(
        options,
        config,
        template=f"rubric_based_{subject}_quality_v1",
        variables=PROMPT_VARIABLES,
        default_threshold=0.8,
        default_samples=5,
    )
    return RubricCriterion(
        name=name,
        setup=setup,
        rubrics=list(options.rubrics),
        subject=subject,
        # as in ADK, only the final-response rubrics read it
        include_intermediate=subject == "final_response"
        and options.include_intermediate_responses_in_final,
    )


@criterion(
    "rubric_based_final_response_quality_v1",
    RubricOptions,
    judges=("rubrics",),
    needs_rubrics=True,
    intermediate_in_final=True,
)
def build_final_response_rubrics(
    name: str, options: RubricOptions, config: EvalConfig
) -> RubricCriterion:
    """An LLM judge: does each turn's answer meet each rubric? (threshold 0.8, 5
    samples)."""
    return _build(name, options, config, "final_response")


@criterion(
    "rubric_based_tool_use_quality_v1",
    RubricOptions,
    judges=("rubrics",),
    needs_rubrics=True,
    subject="tool_calls",
)
def build_tool_use_rubrics(
    name: str, options: RubricOptions, config: EvalConfig
) -> RubricCriterion:
    """An LLM judge: do each turn's tool calls meet each rubric? (threshold 0.8, 5
    samples)."""
    return _build(name, options, config, "tool_use")
