"""What a case's trials took, summarised: per measure (cost, tokens, model calls, tool
calls, latency) the median and 90th percentile with their order-statistic intervals
(:mod:`agentflow_eval.run.quantiles`)."""

from __future__ import annotations

from collections.abc import Sequence

from agentflow_eval.models.results import CaseEfficiency, RunResult, TrialFigures, ValueSpread
from agentflow_eval.run.quantiles import quantile_interval

__all__ = ["case_efficiency", "run_efficiency", "value_spread"]


def value_spread(values: Sequence[float]) -> ValueSpread:
    """The spread of ``values`` (at least one): median and 90th percentile with 95%
    distribution-free intervals."""
    median = quantile_interval(values, 0.5)
    p90 = quantile_interval(values, 0.9)
    return ValueSpread(
        trials=len(values),
        min=min(values),
        max=max(values),
        median=median.value,
        median_low=median.low,
        median_high=median.high,
        median_coverage=median.coverage,
        p90=p90.value,
        p90_low=p90.low,
        p90_high=p90.high,
        p90_coverage=p90.coverage,
    )


def case_efficiency(figures: Sequence[TrialFigures]) -> CaseEfficiency | None:
    """The case's summary over its trials' ``figures``; None without trials. Cost is
    summarised only when every trial's cost is known: a median over the priced trials
    alone would pass for the case's."""
    if not figures:
        return None
    costs = [f.cost_usd for f in figures]
    return CaseEfficiency(
        cost_usd=None
        if any(cost is None for cost in costs)
        else value_spread([c for c in costs if c is not None]),
        total_tokens=value_spread([float(f.input_tokens + f.output_tokens) for f in figures]),
        model_calls=value_spread([float(f.model_calls) for f in figures]),
        tool_calls=value_spread([float(f.tool_calls) for f in figures]),
        latency_ms=value_spread([f.latency_ms for f in figures]),
    )


def run_efficiency(run: RunResult) -> CaseEfficiency | None:
    """What the run's trials took, every case's pooled: for production traces, where
    each trace is a case, this is the efficiency per trace of the version's window."""
    return case_efficiency([figure for case in run.cases for figure in case.trial_figures])
