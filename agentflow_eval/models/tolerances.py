"""How much more a run may cost, take, say or call than its baseline before a regression
gate fails on it: the team's tolerances for efficiency.

Without a tolerance an efficiency change is reported, never gated: trials vary, and a
change that is significant yet small (a 3% slower median over thousands of trials) is no
reason to fail a build. A tolerance is an increase of the median, as a fraction
(``0.1``) or a percentage (``"10%"``); the CLI flags, the flows' parameters,
``AgentEvaluator`` and the pytest options all read it with :func:`parse_increase`.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict

__all__ = [
    "MEASURES",
    "EfficiencyTolerances",
    "Increase",
    "Measure",
    "parse_increase",
]

Measure = Literal["cost", "tokens", "latency", "tool_calls"]
"""What a trial took: its model cost (USD), tokens (input plus output), wall time, tool
calls."""

MEASURES: tuple[Measure, ...] = ("cost", "tokens", "latency", "tool_calls")


def parse_increase(value: object) -> float | None:
    """A tolerated increase as a fraction: ``"10%"`` → 0.1, ``"0.1"`` and ``0.1`` → 0.1,
    None/blank → None. A number is a fraction; written as text (a flag, a form) one of 1
    or more must carry its ``%`` (``"10"`` is refused rather than read as 1000%). Raises
    ValueError naming the value."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValueError(f"an increase is a percentage such as 10% or a fraction, not {value}")
    text = str(value).strip()
    percent = text.endswith("%")
    try:
        number = float(text.removesuffix("%").strip())
    except ValueError:
        raise ValueError(f"{value!r} is not an increase: write it as 10% or 0.1") from None
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{value!r} is not an increase: it must be 0 or more (10% or 0.1)")
    if percent:
        return number / 100
    if number >= 1 and isinstance(value, str):
        raise ValueError(
            f"{value!r} is ambiguous: write a percentage with its % (e.g. {number:g}%) or a "
            "fraction below 1 (0.1 for 10%)"
        )
    return number


Increase = Annotated[float | None, BeforeValidator(parse_increase)]
"""A tolerated increase of a median, as a fraction (``"10%"`` is read as 0.1)."""


class EfficiencyTolerances(BaseModel):
    """The increases a regression gate tolerates, per measure (None: that measure never
    gates, it is only reported)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_cost_increase: Increase = None
    max_latency_increase: Increase = None
    max_token_increase: Increase = None
    max_tool_call_increase: Increase = None

    def of(self, measure: Measure) -> float | None:
        """The tolerated increase of ``measure``."""
        return {
            "cost": self.max_cost_increase,
            "tokens": self.max_token_increase,
            "latency": self.max_latency_increase,
            "tool_calls": self.max_tool_call_increase,
        }[measure]

    @property
    def any(self) -> bool:
        """Whether any measure gates."""
        return any(self.of(measure) is not None for measure in MEASURES)
