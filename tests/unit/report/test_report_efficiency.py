"""The report's comparison section shows efficiency (each measure overall, the cases that
changed, the per-case test named) and where a regressed case's trajectories part ways."""

from __future__ import annotations

import numpy as np
from support.efficiency_sim import simulated_figures
from support.run_counts import Counts, run_with_counts

from agentflow_eval.compare import compare_runs
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.models.tolerances import EfficiencyTolerances
from agentflow_eval.report.html import render_html


def _section(page: str) -> str:
    start = page.index('<section class="comparison"')
    return page[start : page.index("</section>", start)]


def test_efficiency_and_divergence_in_the_comparison_section() -> None:
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
        baseline, candidate, tolerances=EfficiencyTolerances(max_latency_increase=0.25)
    )
    record = RunComparison(baseline="base", fail_on_regression=True, comparison=comparison)
    section = _section(render_html(candidate, record))
    efficiency = section[section.index('<div class="cmp-efficiency">') :]
    assert "<h3>Efficiency</h3>" in efficiency
    assert "Per case: Mann–Whitney U test on the trials&#39; values" in efficiency
    # beyond its tolerance: marked as the regression it is
    row = efficiency[efficiency.index('<tr class="regression"><td><code>c0</code>') :]
    row = row.split("</tr>")[0]
    assert "latency: median" in row and ": slower, beyond the 25% tolerated" in row
    assert "latency ×" in efficiency and "tolerated increase 25%" in efficiency
    assert "<h3>Where the trajectories part ways</h3>" in efficiency
    assert "<code>c3</code> (regression):<br>tools: step 2: refund 0/30 → 18/30" in efficiency
