"""Simulated trial figures for efficiency comparisons (tests and benchmarks).

One distribution throughout, so an A/A comparison draws both sides from the same one:
latency log-normal (median 2,000 ms, σ 0.5 of its log); input tokens log-normal (median
1,500, σ 0.3), output tokens log-normal (median 300, σ 0.4), both rounded; tool calls
1 + Poisson(1.5); cost the tokens at $2.50 (input) and $10 (output) per million. A
planted change scales a measure's draws (``latency=2.0``: twice as slow).
"""

from __future__ import annotations

import numpy as np

from agentflow_eval.models.results import TrialFigures

__all__ = ["LATENCY_MEDIAN_MS", "LATENCY_SIGMA", "simulated_figures"]

LATENCY_MEDIAN_MS = 2_000.0
LATENCY_SIGMA = 0.5


def simulated_figures(
    rng: np.random.Generator,
    runs: int,
    *,
    latency: float = 1.0,
    tokens: float = 1.0,
    tool_path: tuple[str, ...] = ("search_orders", "lookup_order"),
) -> list[TrialFigures]:
    """``runs`` trials' figures, latency and tokens scaled by ``latency`` and ``tokens``."""
    figures = []
    for index in range(runs):
        input_tokens = round(tokens * 1_500 * float(rng.lognormal(0.0, 0.3)))
        output_tokens = round(tokens * 300 * float(rng.lognormal(0.0, 0.4)))
        calls = 1 + int(rng.poisson(1.5))
        figures.append(
            TrialFigures(
                trial_index=index,
                cost_usd=(input_tokens * 2.5 + output_tokens * 10.0) / 1_000_000,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                model_calls=calls + 1,
                tool_calls=calls,
                steps=calls + 1,
                latency_ms=latency * LATENCY_MEDIAN_MS * float(rng.lognormal(0.0, LATENCY_SIGMA)),
                tool_path=list(tool_path),
            )
        )
    return figures
