"""Targets for the custom-criterion tests, named as ``criteria_custom_targets:attr``."""

from __future__ import annotations

from dataclasses import dataclass

from agentflow_eval.criteria.base import CriterionContext, scored
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.results import CriterionResult

NOT_CALLABLE = 3


def is_short(ctx: CriterionContext, max_words: int = 5) -> bool:
    """Passes when the final answer has at most ``max_words`` words."""
    return len((ctx.trial.final_response or "").split()) <= max_words


async def three_quarters(ctx: CriterionContext) -> float:
    return 0.75


def with_reason(ctx: CriterionContext) -> tuple[float, str]:
    return 0.25, "only one of four facts"


def full_result(ctx: CriterionContext) -> CriterionResult:
    return CriterionResult(criterion="whatever", status="passed", score=0.9, details={"facts": 9})


def returns_text(ctx: CriterionContext) -> str:
    return "yes"


def returns_too_much(ctx: CriterionContext) -> float:
    return 1.5


def raises(ctx: CriterionContext) -> bool:
    raise RuntimeError("tool log unreadable")


def needs_two(ctx: CriterionContext, other: object) -> bool:
    return True


@dataclass
class WordCount:
    """A factory class: the answer has at least ``min_words`` words (from options)."""

    name: str
    options: CriterionConfig
    config: EvalConfig

    @property
    def threshold(self) -> float:
        return self.options.threshold if self.options.threshold is not None else 1.0

    @property
    def label(self) -> str:
        return f"at least {self.options.options['min_words']} words"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        words = len((ctx.trial.final_response or "").split())
        return scored(self, 1.0 if words >= self.options.options["min_words"] else 0.0)


def make_word_count(name: str, options: CriterionConfig, config: EvalConfig) -> WordCount:
    return WordCount(name, options, config)


def bad_factory(name: str, options: CriterionConfig, config: EvalConfig) -> int:
    return 42


class NoArgs:
    name = "n"
    label = "n"
    threshold = 1.0

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        return scored(self, 1.0)


class Checks:
    """A namespace of checks, named as ``Checks.always_passes``."""

    @staticmethod
    def always_passes(ctx: CriterionContext) -> bool:
        return True
