"""``response_match_score``: ROUGE-1 F-measure of the agent's final answer against the
expected one, averaged over the invocations that have an expected answer.

The numbers equal Google ADK's on the same text: the ``rouge-score`` package's ROUGE-1
with the reference as ``target`` and the answer as ``prediction``, and the Porter stemmer
on ("running" and "run" match) unless either text is mostly non-Latin script, where ADK
turns stemming off because the stemmer is English-only.

A trial with no answer for an invocation scores 0 there. A case with no expected answer
text at all (or a ``conversation_scenario`` case) is skipped: there is nothing to compare.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

from nltk.stem import porter
from rouge_score import rouge_scorer, tokenize, tokenizers

from agentflow_eval.criteria.base import CriterionContext, scored, skipped, threshold_of
from agentflow_eval.criteria.invocations import paired_turns
from agentflow_eval.criteria.registry import register
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.results import CriterionResult

__all__ = ["ResponseMatchCriterion", "Rouge1", "rouge1"]


@dataclass(frozen=True)
class Rouge1:
    """ROUGE-1 of an answer against a reference."""

    precision: float
    recall: float
    fmeasure: float


class _MemoStemmer:
    """The Porter stemmer ``rouge-score`` uses, remembering the words it has stemmed.
    Stemming is three quarters of ROUGE-1's time and answers repeat their words."""

    def __init__(self) -> None:
        self.stem = lru_cache(maxsize=65536)(porter.PorterStemmer().stem)


class _Tokenizer(tokenizers.Tokenizer):
    """``rouge-score``'s default tokenizer (same tokens) over the remembering stemmer."""

    def __init__(self, use_stemmer: bool) -> None:
        self._stemmer = _MemoStemmer() if use_stemmer else None

    def tokenize(self, text: str) -> list[str]:
        return list(tokenize.tokenize(text, self._stemmer))


@cache
def _scorer(use_stemmer: bool) -> rouge_scorer.RougeScorer:
    """One scorer per stemming choice, built on first use and then reused."""
    return rouge_scorer.RougeScorer(["rouge1"], tokenizer=_Tokenizer(use_stemmer))


_ASCII_LETTER = re.compile(r"[A-Za-z]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


@cache
def _letter_script(char: str) -> tuple[bool, bool]:
    """(is a letter, is a Latin letter) for one non-ASCII character."""
    if not unicodedata.category(char).startswith("L"):
        return False, False
    return True, "LATIN" in unicodedata.name(char, "")


def _mostly_latin(text: str) -> bool:
    """True when more than half of the letters are Latin script (or there are none)."""
    if text.isascii():  # the common case, without a Unicode lookup per character
        return True
    letters = latin = len(_ASCII_LETTER.findall(text))  # ASCII letters are Latin
    for char in _NON_ASCII.findall(text):  # only these need a Unicode lookup
        is_letter, is_latin = _letter_script(char)
        letters += is_letter
        latin += is_latin
    return letters == 0 or latin / letters > 0.5


def rouge1(response: str, reference: str) -> Rouge1:
    """ROUGE-1 of ``response`` against ``reference``, computed as Google ADK does."""
    use_stemmer = _mostly_latin(response) and _mostly_latin(reference)
    score = _scorer(use_stemmer).score(target=reference, prediction=response)["rouge1"]
    return Rouge1(score.precision, score.recall, score.fmeasure)


@dataclass
class ResponseMatchCriterion:
    """Scores final answers by ROUGE-1 overlap with the expected final responses."""

    name: str
    threshold: float
    label: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.label = f"response ROUGE-1 >= {self.threshold:g}"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        if ctx.case.conversation_scenario is not None:
            return skipped(
                self,
                f"case {ctx.case.eval_id!r} is a conversation_scenario (simulated user): "
                "it has no expected final responses to compare against",
            )
        rows: list[dict[str, Any]] = []
        for invocation, turn in paired_turns(ctx.case, ctx.trial):
            expected = invocation.expected_final_response
            reference = expected.text if expected is not None else ""
            if not reference:
                continue
            answer = turn.final_response if turn is not None else None
            value = rouge1(answer or "", reference)
            rows.append(
                {
                    "invocation_id": invocation.invocation_id,
                    "expected": reference,
                    "actual": answer,
                    "score": value.fmeasure,
                    "precision": value.precision,
                    "recall": value.recall,
                    "missing_turn": turn is None,
                }
            )
        if not rows:
            return skipped(
                self,
                f"case {ctx.case.eval_id!r} has no invocation with an expected final "
                "response text to compare against",
            )
        score = sum(row["score"] for row in rows) / len(rows)
        missing = [row["invocation_id"] for row in rows if row["actual"] is None]
        reason = f"no final response for {', '.join(missing)}" if missing else None
        return scored(self, score, {"invocations": rows}, reason=reason)


@register("response_match_score")
def build_response_match(
    name: str, options: CriterionConfig, config: EvalConfig
) -> ResponseMatchCriterion:
    """``response_match_score`` from its config entry (default threshold 0.8, as ADK)."""
    return ResponseMatchCriterion(name=name, threshold=threshold_of(options, 0.8))
