"""Simulated trial figures for efficiency comparisons (tests and benchmarks).

One distribution throughout, so an A/A comparison draws both sides from the same one:
latency log-normal (median 2,000 ms, σ 0.5 of its log); input tokens log-normal (median
1,500, σ 0.3), output tokens log-normal (median 300, σ 0.4), both rounded; tool calls
1 + Poisson(1.5); cost the tokens at $2.50 (input) and $10 (output) per million. A
planted change scales a measure's draws (``latency=2.0``: twice as slow).
"""

from __future__ import annotations

import numpy as np

from agentflow_eval.compare import compare_runs
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.models.results import RunResult, TrialFigures
from agentflow_eval.models.tolerances import EfficiencyTolerances
from support.run_counts import Counts, run_with_counts

__all__ = [
    "LATENCY_MEDIAN_MS",
    "LATENCY_SIGMA",
    "simulated_figures",
    "slower_and_diverged",
]

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


def slower_and_diverged() -> tuple[RunResult, RunComparison]:
    """A candidate of four cases of 30 trials against its baseline: ``c0`` twice as slow
    (beyond a 25% latency tolerance), ``c3`` calling refund second in 18 trials and
    passing only 12; with the comparison record (failing on regression). The two are
    compared as runs made side by side: latency is called."""
    rng = np.random.default_rng(9)
    baseline = run_with_counts(
        [Counts(f"c{i}", 30, 30, figures=simulated_figures(rng, 30)) for i in range(4)]
    )
    refund = simulated_figures(rng, 18, tool_path=("search_orders", "refund"))
    candidate = run_with_counts(
        [
            Counts("c0", 30, 30, figures=simulated_figures(rng, 30, latency=2.0)),
            *(Counts(f"c{i}", 30, 30, figures=simulated_figures(rng, 30)) for i in (1, 2)),
            Counts("c3", 12, 30, figures=[*refund, *simulated_figures(rng, 12)]),
        ],
        run_id="cand",
        day=1,
    )
    comparison = compare_runs(
        baseline,
        candidate,
        tolerances=EfficiencyTolerances(max_latency_increase=0.25),
        pairing="paired",
    )
    record = RunComparison(baseline="base", fail_on_regression=True, comparison=comparison)
    return candidate, record
