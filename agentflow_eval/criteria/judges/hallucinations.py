"""``hallucinations_v1``: is each sentence of the agent's answer grounded in what the
agent had to go on? (Google ADK's criterion of the same name.)

Each turn's final answer (and its intermediate responses, with
``evaluate_intermediate_nl_responses``) is split into sentences
(:func:`~agentflow_eval.criteria.judges.sentences.split_sentences`). The judge labels every
sentence ``supported``, ``unsupported``, ``contradictory`` or ``not_applicable`` against
the context: the case's ``context``, the session's initial state, the conversation so
far, and every tool call and result up to that turn. Each sample labels all sentences of
a turn; a sentence's label is the most common one over the samples, a tie going to the
less favourable label (contradictory, then unsupported, then not_applicable). The score
is the fraction of sentences labelled supported or not_applicable (default threshold 0.8,
5 samples).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from agentflow_eval.criteria.base import CriterionContext, not_evaluated
from agentflow_eval.criteria.judges.common import (
    Answer,
    DetailRow,
    JudgeAsks,
    JudgeCriterion,
    JudgeSetup,
    Scoring,
    TurnView,
    plurality,
    tool_calls_text,
    turn_views,
)
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.criteria.judges.runtime import JudgeOutputError, parse_json_reply
from agentflow_eval.criteria.judges.sentences import split_sentences
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import CriterionResult

__all__ = [
    "GROUNDED_LABELS",
    "HallucinationsCriterion",
    "HallucinationsOptions",
    "SentenceLabel",
    "SentenceLabels",
    "sentence_parser",
]

PROMPT_VARIABLES = frozenset(
    {"context", "session_state", "conversation", "tool_calls", "sentences"}
)
"""What the prompt template is rendered with (an override may use any of them)."""

Label = Literal["supported", "unsupported", "contradictory", "not_applicable"]
WORST_FIRST: tuple[Label, ...] = ("contradictory", "unsupported", "not_applicable", "supported")
GROUNDED_LABELS: frozenset[str] = frozenset({"supported", "not_applicable"})


class SentenceLabel(BaseModel):
    """The judge's label for one numbered sentence in one sample."""

    index: int
    reasoning: str = ""
    label: Label

    @field_validator("label", mode="before")
    @classmethod
    def _normalise(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip().lower().replace("-", "_").replace(" ", "_")
        return value


class SentenceLabels(BaseModel):
    """What the judge answers for one sample: a label per sentence."""

    sentences: list[SentenceLabel]


def sentence_parser(count: int) -> Callable[[str], dict[int, SentenceLabel]]:
    """A parser that accepts a reply only with exactly one label for each of the
    sentences numbered 1..``count``."""

    def parse(content: str) -> dict[int, SentenceLabel]:
        reply = parse_json_reply(content, SentenceLabels)
        by_index: dict[int, SentenceLabel] = {}
        for item in reply.sentences:
            if item.index in by_index:
                raise JudgeOutputError(f"sentence {item.index} has two labels")
            by_index[item.index] = item
        expected = set(range(1, count + 1))
        if by_index.keys() != expected:
            raise JudgeOutputError(
                f"expected one label for each sentence 1..{count}; "
                f"missing {sorted(expected - by_index.keys())}, "
                f"unknown {sorted(by_index.keys() - expected)}"
            )
        return by_index

    return parse


@dataclass
class HallucinationsCriterion(JudgeCriterion):
    """Labels each sentence of the agent's answers against the context it had."""

    include_intermediate: bool = False

    @property
    def label(self) -> str:
        return f"answer grounded in context (LLM judge) >= {self.threshold:g}"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        views = turn_views(ctx)
        rows: list[DetailRow] = []
        asks = JudgeAsks(self)
        for view in views:
            sentences = self._sentences(view)
            if not sentences:
                continue
            row: DetailRow = {
                "invocation_id": view.invocation_id,
                "sentences": [
                    {"index": i, "text": text, "votes": []}
                    for i, text in enumerate(sentences, start=1)
                ],
            }
            rows.append(row)
            prompt = self.setup.template.render(
                context=ctx.case.context or "(none)",
                session_state=_session_state(ctx),
                conversation=_conversation(views, view),
                tool_calls=tool_calls_text(
                    [call for v in views[: view.index + 1] if v.turn for call in v.turn.tool_calls]
                ),
                sentences="\n".join(f"[{i}] {text}" for i, text in enumerate(sentences, 1)),
            )
            asks.add(row, prompt, sentence_parser(len(sentences)))
        if not rows:
            return not_evaluated(self, "the trial has no answer text to check")
        return await asks.run(ctx.judge, rows, _score_votes)

    def _sentences(self, view: TurnView) -> list[str]:
        if view.turn is None:
            return []
        texts = list(view.turn.intermediate_responses) if self.include_intermediate else []
        if view.turn.final_response:
            texts.append(view.turn.final_response)
        return [sentence for text in texts for sentence in split_sentences(text)]


def _score_votes(rows: list[DetailRow], answers: list[Answer]) -> Scoring:
    """Each sentence labelled by the plurality of its votes; the score is the fraction
    grounded, with the count of each label."""
    for row, reply in answers:
        for sentence in row["sentences"]:
            label: SentenceLabel = reply.value[sentence["index"]]
            sentence["votes"].append(
                {"label": label.label, "reasoning": label.reasoning, "cached": reply.cached}
            )
    labels: list[str] = []
    for row in rows:
        for sentence in row["sentences"]:
            sentence["label"] = plurality([v["label"] for v in sentence["votes"]], WORST_FIRST)
            labels.append(sentence["label"])
    counts = Counter(labels)
    grounded = sum(counts[label] for label in GROUNDED_LABELS)
    ungrounded = len(labels) - grounded
    reason = (
        f"{ungrounded} of {len(labels)} sentences unsupported or contradictory"
        if ungrounded
        else None
    )
    label_counts = {label: counts.get(label, 0) for label in WORST_FIRST}
    return Scoring(grounded / len(labels), reason, {"label_counts": label_counts})


def _session_state(ctx: CriterionContext) -> str:
    state = ctx.case.session_input.state if ctx.case.session_input is not None else {}
    if not state:
        return "(none)"
    return json.dumps(state, ensure_ascii=False, sort_keys=True, default=str)


def _conversation(views: list[TurnView], current: TurnView) -> str:
    """Earlier turns (user and agent) and the current user message, one JSON a line."""
    lines: list[str] = []
    for view in views[: current.index]:
        lines.append(json.dumps({"role": "user", "text": view.user_text}, ensure_ascii=False))
        if view.final_response:
            lines.append(
                json.dumps({"role": "agent", "text": view.final_response}, ensure_ascii=False)
            )
    lines.append(json.dumps({"role": "user", "text": current.user_text}, ensure_ascii=False))
    return "\n".join(lines)


class HallucinationsOptions(JudgeCriterionOptions):
    """Options of hallucinations_v1."""

    evaluate_intermediate_nl_responses: bool = False
    """Judge the intermediate responses' sentences too (as ADK)."""


@criterion("hallucinations_v1", HallucinationsOptions)
def build_hallucinations(
    name: str, options: HallucinationsOptions, config: EvalConfig
) -> HallucinationsCriterion:
    """An LLM judge: is each sentence of the answers grounded in what the agent had to go
    on? (threshold 0.8, 5 samples)."""
    setup = JudgeSetup.resolve(
        options,
        config,
        template="hallucinations_v1",
        variables=PROMPT_VARIABLES,
        default_threshold=0.8,
        default_samples=5,
    )
    return HallucinationsCriterion(
        name=name, setup=setup, include_intermediate=options.evaluate_intermediate_nl_responses
    )
