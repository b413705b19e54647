"""What ``trend.html`` of a published eval set shows, read from its history alone
(``runs.json``): per agent version and window, oldest first, the pass rate with its 95%
interval and what a trial took (for production traces, a trace: its latency, tokens and
cost, each a median with its distribution-free 95% interval), and each row's comparison
with the one before it as the comparison's own tests found it.

A production-traces run is one agent version over one window of traces (its labels
``window_start`` and ``window_end``); any other run's window is the time it ran. A drop
is what a test called (each regressed case's exact test and Holm-adjusted p-value, or
its e-value; each measure significantly worse, with its test), never a line crossing a
threshold: the page only names what the comparison, made when the runs were scored,
decided.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from agentflow_eval.compare.render import format_p
from agentflow_eval.models.results import ValueSpread
from agentflow_eval.report.formats import format_ci, format_cost, format_duration_ms, format_pct
from agentflow_eval.storage.history import (
    ComparisonDigest,
    DropTest,
    EfficiencyDrop,
    RunEntry,
    RunsManifest,
)

__all__ = ["TrendData", "TrendRow", "TrendTest", "trend_data", "window_of"]

Link = Callable[[str, str], str]
"""The link to file ``name`` of the run in folder ``folder``: ``link(folder, name)``."""

UNVERSIONED = "unversioned"
"""How a run without an agent version is shown."""

TEST_NAMES = {
    "boschloo": "Boschloo's exact test",
    "fisher": "Fisher's exact test",
    "exact": "exact test",
    "e-value": "anytime-valid e-value",
    "mann-whitney-u": "Mann–Whitney U",
    "wilcoxon-signed-rank": "Wilcoxon signed-rank",
}
MEASURE_NAMES = {"tool_calls": "tool calls"}


@dataclass(frozen=True)
class Figure:
    """One efficiency measure of a row: the median per trial and its 95% interval, as
    text (``–`` when the run did not measure it)."""

    median: str
    interval: str


@dataclass(frozen=True)
class TrendTest:
    """A row against the row before it, as its comparison found it."""

    baseline: str
    verdict: str
    regressed: bool
    findings: list[str]
    """Each test that called a drop: what dropped, by how much, the test and its p-value
    (or e-value)."""
    summary: str
    """The verdict in one line, with the overall p-value where there is one."""


@dataclass(frozen=True)
class TrendRow:
    """One agent version over one window."""

    folder: str
    run_id: str
    agent: str
    version: str
    window_start: datetime
    window_end: datetime
    trials: int
    passed: int
    pass_rate: float
    ci_low: float
    ci_high: float
    rate: str
    interval: str
    latency: Figure
    tokens: Figure
    cost: Figure
    report: str
    test: TrendTest | None


@dataclass(frozen=True)
class TrendData:
    """The trend page's rows, oldest window first, and its headline counts."""

    eval_set_id: str
    title: str
    rows: list[TrendRow]
    versions: list[str]
    drops: int
    """Rows whose comparison with the row before called a drop."""


def window_of(entry: RunEntry) -> tuple[datetime, datetime]:
    """The window a run covers: its traces' (labels ``window_start``, ``window_end``),
    else the time it ran."""
    return entry.window


def _figure(spread: ValueSpread | None, show: Callable[[float], str]) -> Figure:
    if spread is None:
        return Figure("–", "")
    return Figure(show(spread.median), f"{show(spread.median_low)} – {show(spread.median_high)}")


def _tokens(value: float) -> str:
    return f"{value:,.0f}"


def _dollars(value: float) -> str:
    return format_cost(value) if value else "$0"


def _counts(counts: tuple[int, int] | None) -> str:
    return "–" if counts is None else f"{counts[0]}/{counts[1]}"


def _points(change: float | None) -> str:
    return "" if change is None else f" ({100 * change:+.0f} pts)".replace("-", "−")


def _drop_text(drop: DropTest) -> str:
    evidence = (
        f"e-value {drop.e_value:.3g}"
        if drop.e_value is not None and drop.p_adjusted is None
        else f"Holm-adjusted p {format_p(drop.p_adjusted, missing='–')}"
    )
    return (
        f"pass rate of {drop.case_id}: {_counts(drop.baseline)} → {_counts(drop.candidate)}"
        f"{_points(drop.change)}, {TEST_NAMES.get(drop.test, drop.test)}, {evidence}"
    )


def _efficiency_text(drop: EfficiencyDrop) -> str:
    where = drop.case_id or "overall"
    ratio = "" if drop.ratio is None else f" ×{drop.ratio:.2f}"
    kind = "regression" if drop.regression else "significantly worse"
    p_name = "Holm-adjusted p" if drop.case_id is not None else "p"
    return (
        f"{MEASURE_NAMES.get(drop.measure, drop.measure)} of {where}{ratio} ({kind}), "
        f"{TEST_NAMES.get(drop.test, drop.test)}, {p_name} {format_p(drop.p_adjusted, missing='–')}"
    )


def _test(digest: ComparisonDigest | None) -> TrendTest | None:
    if digest is None:
        return None
    if digest.verdict is None:
        return TrendTest(
            baseline=digest.baseline,
            verdict="not compared",
            regressed=False,
            findings=[],
            summary=f"not compared with {digest.baseline}: {digest.problem or 'no comparison'}",
        )
    findings = [_drop_text(drop) for drop in digest.drops]
    findings += [_efficiency_text(drop) for drop in digest.efficiency_drops]
    overall = "" if digest.overall_p is None else f", overall p {format_p(digest.overall_p)}"
    level = "" if digest.alpha is None else f" at alpha {digest.alpha:g}"
    return TrendTest(
        baseline=digest.baseline,
        verdict=digest.verdict,
        regressed=digest.verdict == "regression",
        findings=findings,
        summary=f"{digest.verdict} against {digest.baseline}{_points(digest.change)}"
        f"{overall}{level}",
    )


def _row(entry: RunEntry, link: Link) -> TrendRow:
    start, end = window_of(entry)
    efficiency = entry.efficiency
    return TrendRow(
        folder=entry.folder,
        run_id=entry.run_id,
        agent=entry.agent,
        version=entry.agent_version or UNVERSIONED,
        window_start=start,
        window_end=end,
        trials=entry.trials,
        passed=entry.passed,
        pass_rate=entry.pass_rate,
        ci_low=entry.ci_low,
        ci_high=entry.ci_high,
        rate=format_pct(entry.pass_rate, 1),
        interval=format_ci(entry.ci_low, entry.ci_high),
        latency=_figure(efficiency.latency_ms if efficiency else None, format_duration_ms),
        tokens=_figure(efficiency.total_tokens if efficiency else None, _tokens),
        cost=_figure(efficiency.cost_usd if efficiency else None, _dollars),
        report=link(entry.folder, "report.html"),
        test=_test(entry.comparison),
    )


def trend_data(manifest: RunsManifest, link: Link) -> TrendData:
    """The trend of ``manifest``'s runs, oldest window first."""
    ordered: Sequence[RunEntry] = sorted(
        manifest.runs, key=lambda entry: (window_of(entry), entry.folder)
    )
    rows = [_row(entry, link) for entry in ordered]
    return TrendData(
        eval_set_id=manifest.eval_set_id,
        title=manifest.eval_set_name or manifest.eval_set_id,
        rows=rows,
        versions=list(dict.fromkeys(row.version for row in rows)),
        drops=sum(1 for row in rows if row.test is not None and row.test.regressed),
    )
