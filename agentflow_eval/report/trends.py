"""Each case's recent trend on an eval set's index page: its pass rate over the last
runs as a sparkline, and the pooled pass rate of the older and the newer half of those
runs, so a slow slide shows even when no single night's change is significant.

The halves pool trials (passed over counted, infrastructure errors left out), so a case
at 5/5, 5/5, 4/5, 4/5, 3/5, 3/5 reads 93% → 67%; the rows come worst slide first. This
is a view of the history, not a test: the night-to-night comparisons are the tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentflow_eval.report.formats import format_pct
from agentflow_eval.storage.history import CASE_HISTORY_RUNS, RunEntry

__all__ = ["CaseTrend", "SparkPoint", "case_trends"]

WIDTH, HEIGHT, PAD = 160.0, 26.0, 3.0


@dataclass(frozen=True)
class SparkPoint:
    x: float
    y: float
    state: str


@dataclass(frozen=True)
class CaseTrend:
    """One case over the last runs (oldest to newest)."""

    case_id: str
    points: list[SparkPoint]
    line: str
    tooltip: str
    older: str
    newer: str
    change: float | None
    change_text: str
    latest: str
    runs: int
    width: float = WIDTH
    height: float = HEIGHT


def _pooled(counts: Sequence[tuple[int, int]]) -> float | None:
    passed = sum(p for p, _ in counts)
    counted = sum(n for _, n in counts)
    return passed / counted if counted else None


def _state(passed: int, counted: int) -> str:
    if counted == 0:
        return "empty"
    return "passing" if passed == counted else "failing" if passed == 0 else "flaky"


def case_trends(
    runs_newest_first: Sequence[RunEntry], limit: int = CASE_HISTORY_RUNS
) -> list[CaseTrend]:
    """The trend of every case in the last ``limit`` runs that recorded per-case counts,
    worst slide first (cases seen in fewer than two of those runs have no trend and
    come last)."""
    runs = [run for run in runs_newest_first[:limit] if run.case_counts][::-1]
    if not runs:
        return []
    order: dict[str, None] = {}
    for run in reversed(runs):  # the newest run's case order, then cases it lacks
        order.update(dict.fromkeys(run.case_counts))
    step = (WIDTH - 2 * PAD) / max(len(runs) - 1, 1)
    trends = []
    for case_id in order:
        seen = [
            (index, run, run.case_counts[case_id])
            for index, run in enumerate(runs)
            if case_id in run.case_counts
        ]
        points = [
            SparkPoint(
                x=round(PAD + index * step, 1),
                y=round(PAD + (HEIGHT - 2 * PAD) * (1 - (passed / counted if counted else 0)), 1),
                state=_state(passed, counted),
            )
            for index, _, (passed, counted) in seen
        ]
        counts = [count for _, _, count in seen]
        half = len(counts) // 2
        older = _pooled(counts[:half]) if half else None
        newer = _pooled(counts[half:]) if half else None
        change = newer - older if older is not None and newer is not None else None
        passed, counted = counts[-1]
        tooltip = "; ".join(
            f"{run.started_at:%Y-%m-%d %H:%M} {run.run_id}: {p}/{n}" for _, run, (p, n) in seen
        )
        trends.append(
            CaseTrend(
                case_id=case_id,
                points=points,
                line=" ".join(f"{p.x},{p.y}" for p in points),
                tooltip=f"{case_id} (oldest to newest): {tooltip}",
                older=format_pct(older),
                newer=format_pct(newer),
                change=change,
                change_text="–" if change is None else f"{100 * change:+.0f} pts".replace("-", "−"),
                latest=f"{passed}/{counted}",
                runs=len(seen),
            )
        )
    trends.sort(key=lambda t: (t.change is None, t.change if t.change is not None else 0.0))
    return trends
