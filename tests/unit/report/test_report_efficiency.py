"""The report's comparison section shows efficiency (each measure overall, the cases that
changed, the per-case test named) and where a regressed case's trajectories part ways;
so do the scorecard's comparison block and the Prefect summary."""

from __future__ import annotations

from support.efficiency_sim import slower_and_diverged

from agentflow_eval.report.html import render_html
from agentflow_eval.report.markdown import md_text, summary_markdown
from agentflow_eval.report.scorecard import format_scorecard


def _section(page: str) -> str:
    start = page.index('<section class="comparison"')
    return page[start : page.index("</section>", start)]


def test_efficiency_and_divergence_in_the_comparison_section() -> None:
    candidate, record = slower_and_diverged()
    section = _section(render_html(candidate, record))
    efficiency = section[section.index('<div class="cmp-efficiency">') :]
    assert "<h3>Efficiency</h3>" in efficiency
    assert "Per case: Wilcoxon signed-rank test on the pairs&#39; differences" in efficiency
    # beyond its tolerance: marked as the regression it is
    row = efficiency[efficiency.index('<tr class="regression"><td><code>c0</code>') :]
    row = row.split("</tr>")[0]
    assert "latency: median" in row and ": slower, beyond the 25% tolerated" in row
    assert "latency ×" in efficiency and "tolerated increase 25%" in efficiency
    assert "<h3>Where the trajectories part ways</h3>" in efficiency
    assert "<code>c3</code> (regression):<br>tools: step 2: refund 0/30 → 18/30" in efficiency


_SLOWER = (
    "efficiency: c0: latency: median 1,614 ms -> 4,454 ms (×2.76, Wilcoxon signed-rank p "
    "(Holm) <0.001): slower, beyond the 25% tolerated"
)
_DIVERGED = (
    "diverged: c3 (regression): tools: step 2: refund 0/30 → 18/30, lookup_order 30/30 → "
    "12/30 (most common path: search_orders, lookup_order (30/30) → search_orders, refund "
    "(18/30))"
)


def test_the_scorecard_comparison_block_shows_efficiency_and_divergence() -> None:
    candidate, record = slower_and_diverged()
    lines = format_scorecard(candidate, comparison=record).splitlines()
    assert f"  {_SLOWER}" in lines
    assert f"  {_DIVERGED}" in lines


def test_the_summary_artifact_shows_efficiency_and_divergence() -> None:
    candidate, record = slower_and_diverged()
    summary = summary_markdown(candidate, comparison=record)
    block = summary[summary.index("**Efficiency and trajectories**") :]
    assert f"- {md_text(_SLOWER)}" in block.splitlines()
    assert f"- {md_text(_DIVERGED)}" in block.splitlines()
