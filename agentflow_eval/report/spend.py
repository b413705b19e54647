"""What a run and its cases spent, in words: cost (``unknown`` while some call's price is
unknown, never a $0 that reads as free), tokens and trial latency. Shared by the
scorecard's spend line, the Prefect summary and the report page."""

from __future__ import annotations

from dataclasses import dataclass

from agentflow_eval.models.results import (
    CaseEfficiency,
    RunResult,
    TrialFigures,
    Usage,
    ValueSpread,
)
from agentflow_eval.report.formats import format_cost, format_duration_ms

__all__ = [
    "LatencyStrip",
    "call_cost_text",
    "case_spend_cells",
    "cost_text",
    "latency_strip",
    "spend_line",
    "spend_markdown",
    "spread_text",
]


def cost_text(usage: Usage) -> str:
    """``$0.0123``; ``unknown`` when some of the calls had no price; ``–`` without calls."""
    if usage.unpriced_calls:
        priced = usage.calls - usage.unpriced_calls
        return "unknown" if not priced else f"unknown ({priced} of {usage.calls} calls priced)"
    if not usage.calls:
        return "–"
    return f"${usage.cost_usd:.4f}"


def call_cost_text(usage: Usage) -> str:
    """A trial's or a turn's cost beside its tokens: read as :func:`cost_text` reads the
    run's (``unknown``, ``–`` without calls, ``$0.0000`` for a known zero), with the
    digits small sums need otherwise (``$0.00057``)."""
    if usage.unpriced_calls or not usage.calls or not usage.cost_usd:
        return cost_text(usage)
    return format_cost(usage.cost_usd)


def _latency(run: RunResult) -> str | None:
    spread = run.totals.trial_latency_ms
    if spread is None:
        return None
    return (
        f"median trial {format_duration_ms(spread.median)} (p90 {format_duration_ms(spread.p90)})"
    )


def spend_line(run: RunResult) -> str | None:
    """The scorecard's line: ``spend: agent $0.0123 (judge $0.0040) · tokens 12,345 ·
    median trial 1.2 s (p90 2.3 s)``; None for a run without trials."""
    totals = run.totals
    if not totals.trials:
        return None
    parts = [f"agent {cost_text(totals.usage)}"]
    if totals.judge_usage.calls:
        parts[0] += f" (judge {cost_text(totals.judge_usage)})"
    parts.append(f"tokens {totals.usage.total_tokens:,}")
    latency = _latency(run)
    if latency:
        parts.append(latency)
    return "spend: " + " · ".join(parts)


def spend_markdown(run: RunResult) -> str:
    """The Prefect summary's bullet: agent and judge cost, tokens, trial latency."""
    totals = run.totals
    text = f"- Cost: agent {cost_text(totals.usage)}, judge {cost_text(totals.judge_usage)}"
    text += f" · tokens {totals.usage.total_tokens:,}"
    latency = _latency(run)
    return text + (f" · {latency}" if latency else "")


def spread_text(spread: ValueSpread | None, unit: str = "") -> str:
    """``12 (p90 30)``, a count's median and 90th percentile; ``unknown`` for None."""
    if spread is None:
        return "unknown"
    if unit == "ms":
        return f"{format_duration_ms(spread.median)} (p90 {format_duration_ms(spread.p90)})"
    if unit == "$":
        return f"${spread.median:.4f} (p90 ${spread.p90:.4f})"
    return f"{spread.median:,.4g} (p90 {spread.p90:,.4g})"


def case_spend_cells(efficiency: CaseEfficiency | None) -> dict[str, str]:
    """A case's figures as the report's columns: cost, tokens, model calls, tool calls,
    latency, each its median with the 90th percentile."""
    if efficiency is None:
        return {}
    # as the run's cost reads (cost_text): "–" where no model call was recorded, a cost
    # nobody measured rather than a $0 that reads as free
    calls = efficiency.model_calls
    cost = "–" if calls.max == 0 else spread_text(efficiency.cost_usd, "$")
    return {
        "cost": cost,
        "tokens": spread_text(efficiency.total_tokens),
        "model calls": spread_text(efficiency.model_calls),
        "tool calls": spread_text(efficiency.tool_calls),
        "latency": spread_text(efficiency.latency_ms, "ms"),
    }


@dataclass(frozen=True)
class LatencyStrip:
    """A case's trial latencies as a small strip: one dot per trial on a line from the
    fastest to the slowest, the median's interval as a band and the median as a tick."""

    width: float
    height: float
    dots: list[float]
    """Each trial's x."""
    band_low: float
    band_high: float
    median: float
    title: str
    """What it shows, in words (the strip's tooltip and accessible name)."""


_STRIP_WIDTH, _STRIP_HEIGHT, _STRIP_PAD = 120.0, 14.0, 4.0


def latency_strip(
    efficiency: CaseEfficiency | None, figures: list[TrialFigures]
) -> LatencyStrip | None:
    """The strip of a case's trial latencies; None without trials."""
    if efficiency is None or not figures:
        return None
    spread = efficiency.latency_ms
    span = spread.max - spread.min

    def x(value: float) -> float:
        inner = _STRIP_WIDTH - 2 * _STRIP_PAD
        where = 0.5 if span <= 0 else (value - spread.min) / span
        return round(_STRIP_PAD + where * inner, 1)

    title = (
        f"trial latency: median {format_duration_ms(spread.median)} "
        f"(interval {format_duration_ms(spread.median_low)}–"
        f"{format_duration_ms(spread.median_high)}, {spread.median_coverage:.0%} coverage), "
        f"p90 {format_duration_ms(spread.p90)}, "
        f"range {format_duration_ms(spread.min)}–{format_duration_ms(spread.max)}"
    )
    return LatencyStrip(
        width=_STRIP_WIDTH,
        height=_STRIP_HEIGHT,
        dots=[x(f.latency_ms) for f in figures],
        band_low=x(spread.median_low),
        band_high=x(spread.median_high),
        median=x(spread.median),
        title=title,
    )
