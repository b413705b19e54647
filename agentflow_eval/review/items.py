"""The judged verdicts of a run a person can check, and everything a reviewer needs to
check one: the conversation with its tool calls, the answer and the reference, and the
judge's verdict, score and reasoning."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agentflow_eval.models.results import (
    CaseResult,
    CriterionResult,
    ExpectedTurn,
    RunResult,
    TrialResult,
)

__all__ = [
    "JudgeVerdict",
    "JudgedVerdict",
    "ReviewItem",
    "ReviewToolCall",
    "ReviewTurn",
    "content_key_of",
    "judged_criteria",
    "judged_verdicts",
    "review_item",
    "samples_disagreed",
]

JudgeVerdict = Literal["pass", "fail"]


class _View(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)


class ReviewToolCall(_View):
    """A tool call the agent made, as a reviewer sees it."""

    name: str
    """The tool."""
    args: dict[str, Any]
    """The arguments the agent passed."""
    result: Any = None
    """What the tool returned."""
    error: str | None = None
    """The tool's error, if it raised."""


class ReviewTurn(_View):
    """One user turn: what the user said, what the agent did and answered, and the
    answer the eval set expected."""

    invocation_id: str
    """The turn's id."""
    user_text: str
    """What the user said."""
    tool_calls: list[ReviewToolCall]
    """The tool calls the agent made, in order."""
    answer: str | None
    """The agent's answer to the turn (null when it gave none)."""
    reference: str | None = None
    """The eval set's reference answer to the turn, if it has one."""


class ReviewItem(_View):
    """One criterion's verdict on one trial, with everything a reviewer needs to check it."""

    run_id: str
    """The run the trial is in."""
    case_id: str
    """The case."""
    trial: int
    """The trial's index within the case as ``results.json`` numbers it (from 0; people
    read it as trial ``trial + 1``)."""
    criterion: str
    """The criterion's name in the config."""
    criterion_label: str
    """How the scorecard names it."""
    content_key: str | None
    """The judge cache's content key of what the judge was shown (what a label is kept
    by); null for a criterion that records none."""
    verdict: JudgeVerdict
    """The judge's verdict."""
    score: float | None
    """The judge's score."""
    threshold: float | None
    """The score a pass needs."""
    score_range: tuple[float, float]
    """The scale of the score and of a reviewer's score (a rubric's, ADK's 1 to 5)."""
    reason: str | None
    """Why the criterion failed the trial, as it said."""
    reasoning: list[str]
    """The judge's reasoning, one entry per distinct sample's explanation."""
    samples_disagreed: bool
    """Whether the judge's samples reached different verdicts."""
    conversation: list[ReviewTurn]
    """The conversation, turn by turn."""
    final_answer: str | None
    """The agent's last answer."""
    reference_answer: str | None
    """The eval set's reference for the last turn, if it has one."""
    trial_error: str | None = None
    """Why the trial did not finish, if it did not."""

    @property
    def key(self) -> tuple[str, int, str]:
        """(case, trial, criterion): what a label names."""
        return (self.case_id, self.trial, self.criterion)


@dataclass(frozen=True)
class JudgedVerdict:
    """A criterion's pass or fail on one trial (a verdict a person can check)."""

    case: CaseResult
    trial: TrialResult
    result: CriterionResult

    @property
    def verdict(self) -> JudgeVerdict:
        return "pass" if self.result.status == "passed" else "fail"

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.trial.trial.case_id, self.trial.trial.trial_index, self.result.criterion)

    @property
    def content_key(self) -> str | None:
        return content_key_of(self.result)

    @property
    def samples_disagreed(self) -> bool:
        return samples_disagreed(self.result)


def content_key_of(result: CriterionResult) -> str | None:
    """The content key an LLM judge records with its verdict, if any."""
    key = result.details.get("content_key")
    return key if isinstance(key, str) else None


def samples_disagreed(result: CriterionResult) -> bool:
    """Whether the judge's samples of one prompt reached different verdicts."""
    return result.details.get("samples_disagree") is True


def judged_verdicts(
    run: RunResult, criteria: Sequence[str] | None = None
) -> Iterator[JudgedVerdict]:
    """Every pass or fail the run's criteria gave (``criteria``: only those), in the
    results' order (by case, trial, criterion). Verdicts the criterion could not give
    (not evaluated, skipped) are not a judge's to check."""
    wanted = None if criteria is None else set(criteria)
    cases = {case.case_id: case for case in run.cases}
    for trial in run.trials:
        case = cases.get(trial.trial.case_id)
        if case is None:
            continue
        for result in trial.criteria:
            if result.status not in ("passed", "failed"):
                continue
            if wanted is not None and result.criterion not in wanted:
                continue
            yield JudgedVerdict(case, trial, result)


def judged_criteria(run: RunResult) -> list[str]:
    """The criteria of ``run`` an LLM judge decided (their verdicts record a content
    key), in the order first met."""
    seen: dict[str, None] = {}
    for verdict in judged_verdicts(run):
        if verdict.content_key is not None:
            seen.setdefault(verdict.result.criterion, None)
    return list(seen)


def review_item(run: RunResult, judged: JudgedVerdict) -> ReviewItem:
    """What a reviewer is shown for ``judged``."""
    result = judged.result
    trial = judged.trial.trial
    references = {turn.invocation_id: turn for turn in judged.case.expected}
    conversation = [
        ReviewTurn(
            invocation_id=turn.invocation_id,
            user_text=turn.user_text,
            tool_calls=[
                ReviewToolCall(name=call.name, args=call.args, result=call.result, error=call.error)
                for call in turn.tool_calls
            ],
            answer=turn.final_response,
            reference=_reference(references.get(turn.invocation_id)),
        )
        for turn in trial.turns
    ]
    last_expected = judged.case.expected[-1] if judged.case.expected else None
    span = result.details.get("score_range")
    low, high = (float(span[0]), float(span[1])) if isinstance(span, list) else (0.0, 1.0)
    return ReviewItem(
        run_id=run.run_id,
        case_id=trial.case_id,
        trial=trial.trial_index,
        criterion=result.criterion,
        criterion_label=result.label or result.criterion,
        content_key=judged.content_key,
        verdict=judged.verdict,
        score=result.score,
        threshold=result.threshold,
        score_range=(low, high),
        reason=result.reason,
        reasoning=_reasoning(result.details),
        samples_disagreed=judged.samples_disagreed,
        conversation=conversation,
        final_answer=trial.final_response,
        reference_answer=_reference(last_expected),
        trial_error=trial.error.message if trial.error is not None else None,
    )


def _reference(turn: ExpectedTurn | None) -> str | None:
    return turn.final_response if turn is not None else None


def _reasoning(details: dict[str, Any]) -> list[str]:
    """Every distinct ``reasoning`` text in a verdict's details (its samples' votes), in
    the order found."""
    found: dict[str, None] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "reasoning" and isinstance(value, str) and value.strip():
                    found.setdefault(value.strip(), None)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(details)
    return list(found)
