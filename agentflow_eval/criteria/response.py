"""``response_match_score``: ROUGE-1 F-measure of the agent's final answer against the
expected one, averaged over the invocations that have an expected answer.

The numbers equal Google ADK 2.13's on the same text, in every script: the reference is
ROUGE's ``target`` and the answer its ``prediction``, and both are tokenized as ADK
tokenizes them (:func:`rouge_tokens`):

- the text is NFKC-normalised (full-width letters, ligatures, superscripts become plain
  ones) and lower-cased;
- a word is a run of letters, digits and combining marks; anything else separates words;
- every Chinese ideograph, Japanese kana and Korean Hangul syllable is a token of its own,
  and Thai, Lao, Khmer and Myanmar text is cut into base characters with their marks
  (these scripts are written without spaces, and word segmentation needs a dictionary);
- a word made only of ASCII letters and digits goes through ``rouge-score``'s own rule:
  the Porter stemmer for words longer than three characters ("running" matches "runs");
  any other word is kept as it is, accents included ("café" does not match "cafe").

**An empty reference.** ROUGE-1 of anything against no tokens is 0 (there is nothing to
recall), so an invocation whose expected answer is missing or has no words would only
ever fail. ADK counts such an invocation as 0 in its mean; this criterion leaves it out,
and a case with no reference text at all is *skipped*: there is nothing to compare. Where
an invocation has a reference, its score is ADK's.

A trial with no answer for an invocation scores 0 there. A ``conversation_scenario`` case
has no references and is skipped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from functools import cache, lru_cache
from typing import Any

from agentflow_eval.criteria.base import CriterionContext, scored, skipped, threshold_of
from agentflow_eval.criteria.invocations import paired_turns
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.rouge_deps import porter, rouge_scorer, tokenizers
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import CriterionResult

__all__ = ["ResponseMatchCriterion", "Rouge1", "rouge1", "rouge_row", "rouge_tokens", "scored_rows"]


@dataclass(frozen=True)
class Rouge1:
    """ROUGE-1 of an answer against a reference."""

    precision: float
    recall: float
    fmeasure: float


# --------------------------------------------------------------------------- tokens


class _Kind(Enum):
    """How the tokenizer treats one (normalised, lower-cased) character."""

    SEPARATOR = 0
    WORD = 1
    ALONE = 2  # a CJK character: a token by itself
    CLUSTER_START = 3  # a base character of a script written without spaces
    CLUSTER_MARK = 4  # a combining mark of such a script: joins the character before


# Chinese ideographs, Japanese hiragana and katakana, Korean Hangul syllables.
_ALONE_RANGES = ((0x4E00, 0x9FFF), (0x3040, 0x309F), (0x30A0, 0x30FF), (0xAC00, 0xD7AF))
# Thai, Lao, Myanmar, Khmer.
_CLUSTER_RANGES = ((0x0E00, 0x0E7F), (0x0E80, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF))


def _in(ranges: Iterable[tuple[int, int]], code: int) -> bool:
    return any(low <= code <= high for low, high in ranges)


def _kind(char: str) -> _Kind:
    code = ord(char)
    is_mark = unicodedata.category(char).startswith("M")
    if _in(_ALONE_RANGES, code):
        return _Kind.ALONE
    if _in(_CLUSTER_RANGES, code):
        return _Kind.CLUSTER_MARK if is_mark else _Kind.CLUSTER_START
    # Combining marks (Devanagari vowel signs, Arabic harakat) belong to their letter.
    return _Kind.WORD if char.isalnum() or is_mark else _Kind.SEPARATOR


class _Spacing(dict[int, str]):
    """A ``str.translate`` table that puts spaces where words end, filled in one code
    point at a time as text meets it (so tokenizing runs at C speed once warm)."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        kind = _kind(char)
        if kind is _Kind.SEPARATOR:
            spaced = " "
        elif kind is _Kind.ALONE:
            spaced = f" {char} "
        elif kind is _Kind.CLUSTER_START:
            spaced = f" {char}"
        else:
            spaced = char
        self[code] = spaced
        return spaced


_SPACING = _Spacing()
_ASCII_SEPARATORS = re.compile(r"[^a-z0-9]+")
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    """The text's words after normalisation, before stemming."""
    if text.isascii():  # NFKC leaves ASCII alone, and only [a-z0-9] make words
        return _ASCII_SEPARATORS.sub(" ", text.lower()).split()
    return unicodedata.normalize("NFKC", text).lower().translate(_SPACING).split()


# nltk's Porter stemmer (the one ``rouge-score`` uses), remembering the words it has
# stemmed: stemming is most of ROUGE-1's time, and answers repeat their words.
_stem = lru_cache(maxsize=65536)(porter.PorterStemmer().stem)


def _ascii_token(word: str) -> str | None:
    """``rouge-score``'s rule for a word of ASCII letters and digits: stem it when it is
    longer than three characters; keep it only if it is still letters and digits."""
    token = _stem(word) if len(word) > 3 else word
    return token if _ASCII_TOKEN.fullmatch(token) else None


def rouge_tokens(text: str) -> list[str]:
    """The tokens ROUGE-1 counts in ``text``, as Google ADK 2.13 tokenizes it (see the
    module docstring)."""
    tokens: list[str] = []
    for word in _words(text):
        if word.isascii():
            token = _ascii_token(word)
            if token is not None:
                tokens.append(token)
        else:
            tokens.append(word)
    return tokens


class _Tokenizer(tokenizers.Tokenizer):  # type: ignore[misc]  # rouge-score is untyped
    """:func:`rouge_tokens` as a ``rouge-score`` tokenizer."""

    def tokenize(self, text: str) -> list[str]:
        return rouge_tokens(text)


@cache
def _scorer() -> rouge_scorer.RougeScorer:
    """The scorer, built on first use and then reused."""
    return rouge_scorer.RougeScorer(["rouge1"], tokenizer=_Tokenizer())


def rouge1(response: str, reference: str) -> Rouge1:
    """ROUGE-1 of ``response`` against ``reference``, computed as Google ADK 2.13 does."""
    score = _scorer().score(target=reference, prediction=response)["rouge1"]
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
            row = rouge_row(
                invocation.invocation_id, reference, answer, rouge1(answer or "", reference)
            )
            rows.append({**row, "missing_turn": turn is None})
        if not rows:
            return skipped(
                self,
                f"case {ctx.case.eval_id!r} has no invocation with an expected final "
                "response text to compare against",
            )
        missing = [row["invocation_id"] for row in rows if row["actual"] is None]
        return scored_rows(
            self, rows, f"no final response for {', '.join(missing)}" if missing else None
        )


def rouge_row(invocation_id: str, expected: Any, actual: Any, value: Rouge1) -> dict[str, Any]:
    """One invocation's line in a ROUGE criterion's details."""
    return {
        "invocation_id": invocation_id,
        "expected": expected,
        "actual": actual,
        "score": value.fmeasure,
        "precision": value.precision,
        "recall": value.recall,
    }


def scored_rows(criterion: Any, rows: list[dict[str, Any]], reason: str | None) -> CriterionResult:
    """A ROUGE criterion's result: the mean score of its invocations' ``rows``."""
    score = sum(row["score"] for row in rows) / len(rows)
    return scored(criterion, score, {"invocations": rows}, reason=reason)


@criterion("response_match_score", CriterionOptions, judges=("expected_final_response",))
def build_response_match(
    name: str, options: CriterionOptions, config: EvalConfig
) -> ResponseMatchCriterion:
    """Word overlap (ROUGE-1) of each turn's answer with its reference (default threshold
    0.8, as ADK)."""
    return ResponseMatchCriterion(name=name, threshold=threshold_of(options, 0.8))
