"""Google ADK's efficiency metrics, under ADK's names: ``tool_call_count_v1``,
``inference_call_count_v1``, ``token_usage_v1`` and ``invocation_duration_v1``.

ADK reports each per invocation (a user turn) and averages it over the case: tool calls,
model calls, tokens (prompt and completion) and wall time in seconds. Its status is
informational: the value is recorded, and never passes or fails anything. Here each is
read per trial the same way (the value of each turn, and their mean), and:

- without a maximum it is informational, as in ADK: it passes every trial, with the
  values in its details;
- with one (``max``, or the number alone, in the metric's unit) it is a budget that every
  turn must stay within, checked by ``within_budget`` per turn.

ADK refuses a threshold on these metrics; a threshold here is refused too, pointing at
``max`` (a threshold is a score between 0 and 1, and these are counts and seconds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, model_validator

from agentflow_eval.criteria.base import CriterionContext, scored
from agentflow_eval.criteria.budget import Spent, WithinBudget
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import CriterionResult

__all__ = ["EfficiencyMetric", "EfficiencyOptions"]


@dataclass(frozen=True)
class _Metric:
    """One of ADK's metrics: the budget limit it maps to, its unit, and how many of the
    limit's units one of its own is."""

    limit: str
    what: str
    unit: str
    scale: float = 1.0


_TOOL_CALLS = _Metric("max_tool_calls", "tool calls", "calls")
_MODEL_CALLS = _Metric("max_model_calls", "model calls", "calls")
_TOKENS = _Metric("max_tokens", "tokens", "tokens")
_DURATION = _Metric("max_latency_ms", "duration", "s", scale=1000.0)


class EfficiencyOptions(CriterionOptions):
    """Options of ADK's efficiency metrics: an optional maximum per turn."""

    max: float | None = Field(default=None, ge=0)
    """The most each turn may take, in the metric's unit (calls, tokens, or seconds for
    ``invocation_duration_v1``); without it the metric is informational."""

    @model_validator(mode="before")
    @classmethod
    def _threshold_alone(cls, data: Any) -> Any:
        if isinstance(data, int | float) and not isinstance(data, bool):
            return {"max": float(data)}
        if isinstance(data, dict) and data.get("threshold") is not None:
            raise ValueError(
                "an efficiency metric takes no threshold: give the most per turn as max"
            )
        return data


@dataclass
class EfficiencyMetric:
    """One of ADK's efficiency metrics on a trial (see the module)."""

    name: str
    metric: _Metric
    maximum: float | None = None
    threshold: float = 1.0
    label: str = field(init=False, default="")
    budget: WithinBudget | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        unit = "" if self.metric.unit in ("calls", "tokens") else f" ({self.metric.unit})"
        if self.maximum is None:
            self.label = f"{self.metric.what} per turn{unit}, informational"
            return
        self.label = f"{self.metric.what} per turn ≤ {self.maximum:g}{unit}"
        self.budget = WithinBudget(
            name=self.name,
            limits={self.metric.limit: self.maximum * self.metric.scale},
            per="turn",
            threshold=self.threshold,
        )

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        turns = ctx.trial.turns
        values = [
            Spent.of([turn], turn.latency_ms).value(self.metric.limit) / self.metric.scale
            for turn in turns
        ]
        measured: dict[str, Any] = {
            "value": sum(values) / len(values) if values else None,
            "per_turn": values,
            "unit": self.metric.unit,
        }
        if self.budget is None:
            return scored(self, 1.0, {**measured, "informational": True})
        verdict = await self.budget.evaluate(ctx)
        return verdict.model_copy(
            update={"label": self.label, "details": {**measured, "maximum": self.maximum}}
        )


def _build(name: str, metric: _Metric, options: EfficiencyOptions) -> EfficiencyMetric:
    return EfficiencyMetric(name=name, metric=metric, maximum=options.max)


@criterion("tool_call_count_v1", EfficiencyOptions, subject="tool_calls")
def build_tool_call_count(
    name: str, options: EfficiencyOptions, config: EvalConfig
) -> EfficiencyMetric:
    """ADK's tool calls per turn (their mean over the trial's turns): informational, or at
    most ``max`` in every turn."""
    return _build(name, _TOOL_CALLS, options)


@criterion("inference_call_count_v1", EfficiencyOptions)
def build_inference_call_count(
    name: str, options: EfficiencyOptions, config: EvalConfig
) -> EfficiencyMetric:
    """ADK's model calls per turn (their mean over the trial's turns): informational, or
    at most ``max`` in every turn."""
    return _build(name, _MODEL_CALLS, options)


@criterion("token_usage_v1", EfficiencyOptions)
def build_token_usage(
    name: str, options: EfficiencyOptions, config: EvalConfig
) -> EfficiencyMetric:
    """ADK's tokens per turn, prompt and completion (their mean over the trial's turns):
    informational, or at most ``max`` in every turn."""
    return _build(name, _TOKENS, options)


@criterion("invocation_duration_v1", EfficiencyOptions)
def build_invocation_duration(
    name: str, options: EfficiencyOptions, config: EvalConfig
) -> EfficiencyMetric:
    """ADK's wall time per turn in seconds (its mean over the trial's turns):
    informational, or at most ``max`` seconds in every turn."""
    return _build(name, _DURATION, options)
