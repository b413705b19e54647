"""Chart geometry for the report's inline SVG: plain numbers, computed here and drawn by
the template (which escapes every label), so no markup is built from strings in Python.

- :func:`bar_classes`: the small pass-rate bar on each case's line and in tables, one
  element drawn by the stylesheet (:func:`rate_bar_css`).
- :func:`pass_rate_chart`: one bar per case with its 95% interval. Up to
  :data:`LABELLED_CASES` cases get a labelled horizontal bar each; more become a strip
  of columns sorted by pass rate, each with a tooltip; neighbours with the same result
  share a column.
- :func:`score_histograms`: per criterion, how trial scores spread over ten bins of
  width 0.1 plus one for a perfect 1.0 (thresholds of 1.0 are common), with the
  threshold marked. Text is laid out so it cannot collide at any run size: the title
  and the count of scores on lines of their own, the title clipped to the width, the
  count over each column in at most four characters.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from agentflow_eval.models.results import CaseResult, CriterionResult, TrialResult
from agentflow_eval.report.formats import format_ci, format_count, format_count_short, format_pct

__all__ = [
    "BAR_STEPS",
    "CHART_WIDTH",
    "COMPACT_CHART_WIDTH",
    "LABELLED_CASES",
    "LABEL_CHAR_WIDTH",
    "Bar",
    "BinBar",
    "Histogram",
    "OrderKey",
    "PassRateChart",
    "ScoreBins",
    "bar_classes",
    "case_state",
    "pass_rate_chart",
    "rate_bar_css",
    "score_histograms",
    "verdict_keys",
]

BAR_STEPS = 100
"""A rate bar is drawn in whole hundredths of its width (one pixel of a 100-pixel bar)."""


def bar_classes(rate: float, low: float | None = None, high: float | None = None) -> str:
    """The classes that draw a rate bar with :func:`rate_bar_css`: the fill ``w0``–``w100``
    (never full below a rate of 1, never empty above 0) and, given an interval, the
    whisker from ``l..`` to ``h..`` (widened outward to whole steps). One element with
    classes instead of an SVG per bar: a report has a bar on every case's line."""
    fill = math.floor(rate * BAR_STEPS)
    if rate > 0 and fill == 0:
        fill = 1
    if rate < 1 and fill == BAR_STEPS:
        fill = BAR_STEPS - 1
    classes = f"w{fill}"
    if low is not None and high is not None:
        classes += f" l{math.floor(low * BAR_STEPS)} h{math.ceil(high * BAR_STEPS)}"
    return classes


def rate_bar_css() -> str:
    """The rules behind :func:`bar_classes`: each class sets one custom property the
    bar's background (in ``report.css``) reads."""
    steps = range(BAR_STEPS + 1)
    return "".join(f".w{i}{{--w:{i}}}.l{i}{{--l:{i}}}.h{i}{{--h:{i}}}" for i in steps) + "\n"


LABELLED_CASES = 30
"""Up to this many cases, the pass-rate chart labels each bar with the case id."""

BINS = 11
"""[0, 0.1), [0.1, 0.2), ..., [0.9, 1.0), and exactly 1.0."""


def case_state(case: CaseResult) -> str:
    """passing (every trial passed), failing (none did), flaky (some did) or empty."""
    if case.runs == 0:
        return "empty"
    if case.passed == case.runs:
        return "passing"
    if case.passed == 0:
        return "failing"
    return "flaky"


@dataclass(frozen=True)
class Bar:
    """One case's bar (or, among many columns, the column of ``cases`` neighbours with
    the same result): a rectangle, its interval whisker, and its tooltip."""

    x: float
    y: float
    width: float
    height: float
    ci_from: float
    ci_to: float
    state: str
    label: str
    value_text: str
    tooltip: str
    cases: int = 1


@dataclass(frozen=True)
class PassRateChart:
    """Bars of pass rate per case; ``horizontal`` charts have a label column, or, when
    ``stacked`` (drawn narrow), each label on a line of its own above its bar with its
    value at the line's end."""

    horizontal: bool
    width: float
    height: float
    plot_x: float
    plot_y: float
    plot_width: float
    plot_height: float
    bars: list[Bar]
    ticks: list[tuple[float, str]]
    stacked: bool = False


def _tooltip(case: CaseResult) -> str:
    return (
        f"{case.case_id}: {case.passed}/{case.rated_runs} passed ({format_pct(case.pass_rate)}, "
        f"95% CI {format_ci(case.ci_low, case.ci_high)})"
    )


def _clip_label(text: str, limit: int = 28) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


CHART_WIDTH = 900.0
"""The pass-rate chart's width in SVG units, drawn at about 1:1 on a wide page."""

COMPACT_CHART_WIDTH = 340.0
"""The same chart for a narrow page (a phone): drawn at about 1:1 in 320 px or more."""

LABEL_CHAR_WIDTH = 7.2
"""A case label's glyph width (11.5-unit monospace) in SVG units, to clip labels to
the room they have."""

VALUE_CHARS = 16
"""Room kept for a bar's value (``12/40 · 30%``) at the end of its label line, in
characters of the label's width."""


def pass_rate_chart(cases: Sequence[CaseResult], width: float = CHART_WIDTH) -> PassRateChart:
    """Horizontal labelled bars (in case order) for a few cases; a strip of columns
    sorted by pass rate, worst first, for many; ``width`` units wide. Narrower than
    :data:`CHART_WIDTH`, each label goes on a line over its bar, so a case's id keeps
    its length on a phone."""
    if len(cases) <= LABELLED_CASES:
        return _horizontal(cases) if width >= CHART_WIDTH else _stacked(cases, width)
    return _columns(cases, width)


def _value_text(case: CaseResult) -> str:
    return f"{case.passed}/{case.rated_runs} · {format_pct(case.pass_rate)}"


def _horizontal(cases: Sequence[CaseResult]) -> PassRateChart:
    row, label_w, value_w, width = 22.0, 210.0, 130.0, CHART_WIDTH
    plot_x, plot_y = label_w, 8.0
    plot_w = width - label_w - value_w
    bars = []
    for index, case in enumerate(cases):
        y = plot_y + index * row
        bars.append(
            Bar(
                x=plot_x,
                y=y + 4,
                width=round(plot_w * case.pass_rate, 1),
                height=row - 8,
                ci_from=round(plot_x + plot_w * case.ci_low, 1),
                ci_to=round(plot_x + plot_w * case.ci_high, 1),
                state=case_state(case),
                label=_clip_label(case.case_id),
                value_text=_value_text(case),
                tooltip=_tooltip(case),
            )
        )
    plot_h = row * max(len(cases), 1)
    ticks = [(round(plot_x + plot_w * f, 1), format_pct(f)) for f in (0, 0.25, 0.5, 0.75, 1)]
    return PassRateChart(
        True, width, plot_y + plot_h + 22, plot_x, plot_y, plot_w, plot_h, bars, ticks
    )


def _stacked(cases: Sequence[CaseResult], width: float) -> PassRateChart:
    """Each case on two lines: its id with its value at the line's end, then its bar
    across the whole width."""
    row, line, bar = 36.0, 17.0, 12.0
    plot_x, plot_y = 16.0, 4.0  # room for half of the "0%" and "100%" ticks
    plot_w = width - 2 * plot_x
    label_chars = int(plot_w / LABEL_CHAR_WIDTH) - VALUE_CHARS
    bars = []
    for index, case in enumerate(cases):
        y = plot_y + index * row + line
        bars.append(
            Bar(
                x=plot_x,
                y=y,
                width=round(plot_w * case.pass_rate, 1),
                height=bar,
                ci_from=round(plot_x + plot_w * case.ci_low, 1),
                ci_to=round(plot_x + plot_w * case.ci_high, 1),
                state=case_state(case),
                label=_clip_label(case.case_id, label_chars),
                value_text=_value_text(case),
                tooltip=_tooltip(case),
            )
        )
    plot_h = row * max(len(cases), 1)
    ticks = [(round(plot_x + plot_w * f, 1), format_pct(f)) for f in (0, 0.5, 1)]
    return PassRateChart(
        True, width, plot_y + plot_h + 16, plot_x, plot_y, plot_w, plot_h, bars, ticks, True
    )


GROUP_NAMES = 5
"""A column that stands for several cases names this many of them in its tooltip."""


def _group_tooltip(group: Sequence[CaseResult]) -> str:
    if len(group) == 1:
        return _tooltip(group[0])
    first = group[0]
    names = ", ".join(case.case_id for case in group[:GROUP_NAMES])
    if len(group) > GROUP_NAMES:
        names += f" and {format_count(len(group) - GROUP_NAMES)} more"
    return (
        f"{format_count(len(group))} cases with {first.passed}/{first.rated_runs} passed "
        f"({format_pct(first.pass_rate)}, 95% CI {format_ci(first.ci_low, first.ci_high)}): "
        f"{names}"
    )


def _columns(cases: Sequence[CaseResult], width: float) -> PassRateChart:
    """Columns sorted by pass rate; neighbours with the same result (passed of runs)
    share one column as wide as they are together, so a run of thousands of cases, whose
    rates repeat, draws a handful of shapes (each with a tooltip naming its cases)."""
    plot_x, plot_y, plot_h = 44.0, 8.0, 140.0
    plot_w = width - plot_x - 8
    ordered = sorted(cases, key=lambda c: (c.pass_rate, c.runs, c.case_id))
    step = plot_w / len(ordered)
    gap = 1.0 if step >= 3 else 0.0
    groups = [
        list(group)
        for _, group in itertools.groupby(ordered, key=lambda c: (c.passed, c.runs, c.pass_rate))
    ]
    bars = []
    start = 0
    for group in groups:
        first = group[0]
        height = round(plot_h * first.pass_rate, 1)
        bars.append(
            Bar(
                x=round(plot_x + start * step, 2),
                y=round(plot_y + plot_h - height, 1),
                width=round(max(step * len(group) - gap, 0.5), 2),
                height=height,
                ci_from=round(plot_y + plot_h * (1 - first.ci_high), 1),
                ci_to=round(plot_y + plot_h * (1 - first.ci_low), 1),
                state=case_state(first),
                label=first.case_id,
                value_text=format_pct(first.pass_rate),
                tooltip=_group_tooltip(group),
                cases=len(group),
            )
        )
        start += len(group)
    ticks = [(round(plot_y + plot_h * (1 - f), 1), format_pct(f)) for f in (0, 0.5, 1)]
    return PassRateChart(
        False, width, plot_y + plot_h + 20, plot_x, plot_y, plot_w, plot_h, bars, ticks
    )


@dataclass(frozen=True)
class BinBar:
    """One histogram bin: its column, count and whether it lies below the threshold.
    ``count_text`` is the label over the column, short enough to fit its width
    (:data:`COUNT_CHARS`); the tooltip gives the exact count."""

    x: float
    y: float
    width: float
    height: float
    count: int
    count_text: str
    below: bool
    tooltip: str


TITLE_FONT = 11.5
"""Font size of a histogram's title (the criterion), in the SVG's units."""
CAPTION_FONT = 10.5
"""Font size of the line under the title (how many scores) and of the axis ticks."""
COUNT_FONT = 9.0
"""Font size of the counts over the columns."""
CHAR_WIDTH = 0.62
"""A generous average glyph width of the page's sans-serif font, in ems (digits and
lower case are narrower), for sizing text before a browser lays it out."""
COUNT_CHARS = 4
"""Counts over the columns take at most this many characters (``1.2k``, ``12k``)."""


@dataclass(frozen=True)
class Histogram:
    """How one criterion's trial scores spread over [0, 1]: a title line, a caption line
    under it (``n = 10,000``), then the columns with their counts over them."""

    criterion: str
    label: str
    total: int
    threshold_x: float | None
    threshold: float | None
    bins: list[BinBar]
    caption: str = ""
    width: float = 300.0
    height: float = 152.0
    plot_x: float = 10.0
    plot_y: float = 42.0
    plot_width: float = 280.0
    plot_height: float = 88.0
    title_y: float = 12.0
    caption_y: float = 26.0

    @property
    def title_chars(self) -> int:
        """How many characters of the title fit the plot's width."""
        return int(self.plot_width / (TITLE_FONT * CHAR_WIDTH))


def _bin_of(score: float) -> int:
    return BINS - 1 if score >= 1.0 else max(int(score * 10), 0)


Scale = tuple[float, float]
"""The range a criterion's scores span: [0, 1], or its own (ADK's 1 to 5)."""


def _scale_of(verdict: CriterionResult) -> Scale:
    given = verdict.details.get("score_range")
    if isinstance(given, list) and len(given) == 2 and given[1] > given[0]:
        return float(given[0]), float(given[1])
    return 0.0, 1.0


def _unit(value: float, scale: Scale) -> float:
    """``value`` on ``scale`` as a fraction of it (where its bin is)."""
    low, high = scale
    return (value - low) / (high - low)


OrderKey = tuple[str, int, int]
"""Where a verdict stands in the report's order: (case id, trial index, position among
the trial's criteria)."""


def verdict_keys(result: TrialResult) -> Iterator[tuple[OrderKey, CriterionResult]]:
    """Each verdict of ``result`` with its :data:`OrderKey`."""
    case_id, trial_index = result.trial.key
    for position, verdict in enumerate(result.criteria):
        yield (case_id, trial_index, position), verdict


class ScoreBins:
    """Per criterion, how many trial scores fell in each bin, folded one verdict at a time
    so the report stage never holds the trials. The result does not depend on the order
    verdicts arrive in: criteria are listed, and labelled, as the first of their verdicts
    in (case id, trial index) order would have them."""

    def __init__(self) -> None:
        self._counts: dict[str, list[int]] = {}
        self._first: dict[str, tuple[OrderKey, str, float | None]] = {}
        self._scales: dict[str, Scale] = {}

    def add(self, key: OrderKey, verdict: CriterionResult) -> None:
        """Count ``verdict``'s score; skipped and not-evaluated results have none to count."""
        if verdict.score is None or verdict.status not in ("passed", "failed"):
            return
        name = verdict.criterion
        scale = self._scales.setdefault(name, _scale_of(verdict))
        self._counts.setdefault(name, [0] * BINS)[_bin_of(_unit(verdict.score, scale))] += 1
        first = self._first.get(name)
        if first is None or key < first[0]:
            self._first[name] = (key, verdict.label or name, verdict.threshold)

    def histograms(self) -> list[Histogram]:
        """One histogram per criterion that produced scores, in first-seen order."""
        names = sorted(self._counts, key=lambda name: self._first[name][0])
        return [
            _histogram(
                name,
                self._first[name][1],
                self._first[name][2],
                self._counts[name],
                self._scales[name],
            )
            for name in names
        ]


def score_histograms(trials: Iterable[TrialResult]) -> list[Histogram]:
    """One histogram per criterion that produced scores (see :class:`ScoreBins`)."""
    bins = ScoreBins()
    for result in trials:
        for key, verdict in verdict_keys(result):
            bins.add(key, verdict)
    return bins.histograms()


def _histogram(
    key: str,
    label: str,
    threshold: float | None,
    counts: list[int],
    scale: Scale = (0.0, 1.0),
) -> Histogram:
    total = sum(counts)
    lowest, highest = scale
    width = highest - lowest
    at = None if threshold is None else _unit(threshold, scale)  # where it sits in [0, 1]
    shape = Histogram(key, label, total, None, threshold, [])
    peak = max(counts) or 1
    step = shape.plot_width / BINS
    bars = []
    for index, count in enumerate(counts):
        height = round(shape.plot_height * count / peak, 1)
        perfect = index == BINS - 1
        low, high = (1.0, 1.0) if perfect else (index / 10, (index + 1) / 10)
        shown_low, shown_high = lowest + low * width, lowest + high * width
        span = f"{highest:.1f}" if perfect else f"[{shown_low:.1f}, {shown_high:.1f})"
        bars.append(
            BinBar(
                x=round(shape.plot_x + index * step + 1, 1),
                y=round(shape.plot_y + shape.plot_height - height, 1),
                width=round(step - 2, 1),
                height=height,
                count=count,
                count_text=format_count_short(count),
                below=at is not None and (high < at if perfect else high <= at),
                tooltip=f"score {span}: {format_count(count)} trial(s)",
            )
        )
    # the ten 0.1-wide bins span [0, 1); the threshold sits where its score would fall
    threshold_x = round(shape.plot_x + step * 10 * at, 1) if at is not None else None
    caption = f"n = {format_count(total)}"
    if threshold is not None:
        caption += f" · threshold {threshold:g}"
    return Histogram(
        key,
        _clip_label(label, shape.title_chars),
        total,
        threshold_x,
        threshold,
        bars,
        caption=caption,
    )


@dataclass(frozen=True)
class TrendPoint:
    """One run on the trend line."""

    x: float
    y: float
    ci_top: float
    ci_bottom: float
    state: str
    tooltip: str


@dataclass(frozen=True)
class TrendChart:
    """Pass rate over the last runs, oldest to newest, with the 95% interval as a band."""

    points: list[TrendPoint]
    line: str
    band: str
    ticks: list[tuple[float, str]]
    width: float = 900.0
    height: float = 150.0
    plot_x: float = 44.0
    plot_y: float = 10.0
    plot_width: float = 840.0
    plot_height: float = 110.0


TREND_RUNS = 60


@dataclass(frozen=True)
class RunRate:
    """What the trend needs of a run."""

    label: str
    pass_rate: float
    ci_low: float
    ci_high: float


def trend_chart(
    runs_newest_first: Sequence[RunRate], width: float = CHART_WIDTH
) -> TrendChart | None:
    """The last :data:`TREND_RUNS` runs as a line with its interval band, ``width`` units
    wide; None for fewer than two runs (a single point is no trend)."""
    runs = list(reversed(runs_newest_first[:TREND_RUNS]))
    if len(runs) < 2:
        return None
    shape = TrendChart([], "", "", [], width=width, plot_width=width - 60)
    step = shape.plot_width / (len(runs) - 1)

    def y_of(rate: float) -> float:
        return round(shape.plot_y + shape.plot_height * (1 - rate), 1)

    points = []
    for index, run in enumerate(runs):
        rate = run.pass_rate
        state = "passing" if rate >= 1 else "failing" if rate <= 0 else "flaky"
        points.append(
            TrendPoint(
                x=round(shape.plot_x + index * step, 1),
                y=y_of(rate),
                ci_top=y_of(run.ci_high),
                ci_bottom=y_of(run.ci_low),
                state=state,
                tooltip=(
                    f"{run.label}: {format_pct(rate)} (95% CI {format_ci(run.ci_low, run.ci_high)})"
                ),
            )
        )
    line = " ".join(f"{p.x},{p.y}" for p in points)
    band = " ".join(
        [f"{p.x},{p.ci_top}" for p in points] + [f"{p.x},{p.ci_bottom}" for p in reversed(points)]
    )
    ticks = [(y_of(f), format_pct(f)) for f in (0, 0.5, 1)]
    return TrendChart(points, line, band, ticks, width=width, plot_width=shape.plot_width)
