"""``within_budget``: what a trial spent stays within limits — cost, tokens, model calls,
tool calls, latency — per trial or per turn.

A prompt change that keeps every answer right but doubles the tokens, or makes the agent
three times slower, is a regression a pass rate alone does not show. A budget makes it a
verdict: the trial (or each turn) is measured from its recorded usage (the agent's model
calls only, never the judges'), tool calls and wall time, and fails when any limit is
exceeded, naming each. Scored 1.0 or 0.0, threshold 1.0.

Cost is what the provider reported or LiteLLM's price list gives for the model; when some
call's price is unknown (a self-hosted model), a cost limit gives no verdict rather than
counting that call as free.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field, model_validator

from agentflow_eval.criteria.base import (
    CriterionContext,
    not_evaluated,
    scored,
    threshold_of,
)
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import CriterionResult, Turn

__all__ = ["BudgetOptions", "Spent", "WithinBudget"]

BudgetScope = Literal["trial", "turn"]

_LIMITS: dict[str, str] = {
    "max_cost_usd": "cost",
    "max_tokens": "tokens",
    "max_model_calls": "model calls",
    "max_tool_calls": "tool calls",
    "max_latency_ms": "latency",
}
"""Each limit's option and what it bounds, as a reader sees it."""


class BudgetOptions(CriterionOptions):
    """Options of within_budget: at least one limit."""

    max_cost_usd: float | None = Field(default=None, ge=0)
    """The most the agent's model calls may cost, in US dollars."""
    max_tokens: int | None = Field(default=None, ge=0)
    """The most tokens (prompt and completion) the agent's model calls may use."""
    max_model_calls: int | None = Field(default=None, ge=0)
    """The most model calls the agent may make."""
    max_tool_calls: int | None = Field(default=None, ge=0)
    """The most tool calls the agent may make."""
    max_latency_ms: float | None = Field(default=None, ge=0)
    """The longest the agent may take, in milliseconds (a turn's, or the whole trial's)."""
    per: BudgetScope = "trial"
    """``trial``: the limits bound the whole trial; ``turn``: each turn."""

    @model_validator(mode="after")
    def _some_limit(self) -> BudgetOptions:
        if all(getattr(self, name) is None for name in _LIMITS):
            raise ValueError(f"give at least one limit: {', '.join(_LIMITS)}")
        return self


@dataclass(frozen=True)
class Spent:
    """What one scope (a turn, or the trial) spent."""

    cost: float
    tokens: int
    model_calls: int
    tool_calls: int
    latency: float
    unpriced: int = 0
    """Model calls whose price is unknown (then so is the cost)."""

    @classmethod
    def of(cls, turns: Iterable[Turn], latency_ms: float) -> Spent:
        turns = list(turns)
        return cls(
            cost=sum(turn.usage.cost_usd for turn in turns),
            tokens=sum(turn.usage.total_tokens for turn in turns),
            model_calls=sum(turn.usage.calls for turn in turns),
            tool_calls=sum(len(turn.tool_calls) for turn in turns),
            latency=latency_ms,
            unpriced=sum(turn.usage.unpriced_calls for turn in turns),
        )

    def value(self, limit: str) -> float:
        return {
            "max_cost_usd": self.cost,
            "max_tokens": float(self.tokens),
            "max_model_calls": float(self.model_calls),
            "max_tool_calls": float(self.tool_calls),
            "max_latency_ms": self.latency,
        }[limit]


def _amount(limit: str, value: float) -> str:
    if limit == "max_cost_usd":
        return f"${value:.4f}"
    if limit == "max_latency_ms":
        return f"{value:,.0f} ms"
    return f"{value:,.0f}"


@dataclass
class WithinBudget:
    """Every scope of the trial stays within ``limits`` (see the module)."""

    name: str
    limits: dict[str, float]
    per: BudgetScope = "trial"
    threshold: float = 1.0
    label: str = field(init=False, default="")

    def __post_init__(self) -> None:
        shown = ", ".join(f"{_LIMITS[k]} ≤ {_amount(k, v)}" for k, v in self.limits.items())
        self.label = f"within budget per {self.per} ({shown})"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        trial = ctx.trial
        if self.per == "trial":
            scopes = [("the trial", Spent.of(trial.turns, trial.duration_ms))]
        else:
            scopes = [
                (f"turn {number}", Spent.of([turn], turn.latency_ms))
                for number, turn in enumerate(trial.turns, 1)
            ]
        unpriced = sum(spent.unpriced for _, spent in scopes)
        if "max_cost_usd" in self.limits and unpriced:
            return not_evaluated(
                self, f"cost unknown: {unpriced} model call(s) have no known price"
            )
        over = [
            f"{where}: {_LIMITS[limit]} {_amount(limit, spent.value(limit))} > "
            f"{_amount(limit, bound)}"
            for where, spent in scopes
            for limit, bound in self.limits.items()
            if spent.value(limit) > bound
        ]
        details: dict[str, Any] = {
            "per": self.per,
            "limits": self.limits,
            "spent": [{"where": where, **spent.__dict__} for where, spent in scopes],
        }
        return scored(self, 0.0 if over else 1.0, details, reason="; ".join(over) or None)


@criterion("within_budget", BudgetOptions)
def build_within_budget(name: str, options: BudgetOptions, config: EvalConfig) -> WithinBudget:
    """What a trial (or each turn) spent stays within limits: cost, tokens, model calls,
    tool calls, latency (default threshold 1.0)."""
    limits = {
        limit: float(value) for limit in _LIMITS if (value := getattr(options, limit)) is not None
    }
    return WithinBudget(
        name=name, limits=limits, per=options.per, threshold=threshold_of(options, 1.0)
    )
