"""Chart geometry: bins, thresholds, layouts, and text that stays legible at any size."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime

import pytest

from agentflow_eval.models.results import CaseResult, CriterionResult, Trial, TrialResult
from agentflow_eval.report.charts import (
    CAPTION_FONT,
    CHAR_WIDTH,
    COMPACT_CHART_WIDTH,
    COUNT_CHARS,
    COUNT_FONT,
    LABEL_CHAR_WIDTH,
    TITLE_FONT,
    RunRate,
    bar_classes,
    case_state,
    pass_rate_chart,
    rate_bar_css,
    score_histograms,
    trend_chart,
)
from agentflow_eval.report.templating import asset
from agentflow_eval.run.stats import wilson_interval


def case(case_id: str, passed: int, runs: int = 5) -> CaseResult:
    low, high = wilson_interval(passed, runs) if runs else (0.0, 1.0)
    return CaseResult(
        case_id=case_id,
        label="",
        runs=runs,
        passed=passed,
        failed=runs - passed,
        errored=0,
        not_evaluated=0,
        pass_rate=passed / runs if runs else 0.0,
        ci_low=low,
        ci_high=high,
    )


def trial_with(*scores: tuple[float | None, str]) -> TrialResult:
    trial = Trial(case_id="c", trial_index=0, started_at=datetime(2026, 1, 1, tzinfo=UTC))
    verdicts = [
        CriterionResult(criterion="traj", status=status, score=score, threshold=1.0)  # type: ignore[arg-type]
        for score, status in scores
    ]
    return TrialResult(trial=trial, criteria=verdicts, status="failed")


def test_case_state() -> None:
    assert case_state(case("a", 5)) == "passing"
    assert case_state(case("a", 0)) == "failing"
    assert case_state(case("a", 2)) == "flaky"
    assert case_state(case("a", 0, runs=0)) == "empty"


def test_a_perfect_score_has_its_own_bin_and_the_threshold_marks_what_fails() -> None:
    trials = [
        trial_with((1.0, "passed")),
        trial_with((0.95, "failed")),
        trial_with((0.0, "failed")),
        trial_with((None, "not_evaluated")),
        trial_with((0.5, "skipped")),
    ]
    (hist,) = score_histograms(trials)
    counts = [b.count for b in hist.bins]
    assert len(counts) == 11 and hist.total == 3
    assert counts[10] == 1 and counts[9] == 1 and counts[0] == 1
    assert [b.below for b in hist.bins] == [True] * 10 + [False]
    assert hist.threshold_x == hist.bins[10].x - 1  # the line sits where 1.0 begins


def test_few_cases_get_labelled_bars_in_eval_set_order() -> None:
    chart = pass_rate_chart([case("b", 5), case("a", 1)])
    assert chart.horizontal
    assert [b.label for b in chart.bars] == ["b", "a"]
    assert chart.bars[0].width == chart.plot_width and chart.bars[1].width < chart.plot_width


def test_a_compact_chart_puts_each_label_over_its_bar_and_keeps_its_text_inside() -> None:
    """Drawn 340 units wide for a phone: each case id and its value share a line above
    its bar (an id keeps 26 characters, not the dozen a label column would leave it),
    nothing runs past the edges, and a longer id is clipped to leave the value room."""
    long_id = "a_case_with_a_rather_long_identifier_of_many_words"
    cases = [case("weather_lookup_simple", 5), case(long_id, 40, runs=40), case("a", 0)]
    chart = pass_rate_chart(cases, COMPACT_CHART_WIDTH)
    assert chart.horizontal and chart.stacked and chart.width == COMPACT_CHART_WIDTH
    assert not pass_rate_chart(cases).stacked
    assert chart.bars[0].label == "weather_lookup_simple"
    assert chart.bars[1].label == long_id[:25] + "…" and chart.bars[1].value_text == "40/40 · 100%"
    for bar in chart.bars:
        assert bar.x == chart.plot_x and bar.x + bar.width <= chart.plot_x + chart.plot_width
        label = len(bar.label) * LABEL_CHAR_WIDTH
        value = _text_width(bar.value_text, 12)
        assert label + 8 + value <= chart.plot_width, bar
    tick_room = _text_width("100%", 10.5) / 2
    assert all(tick_room <= x <= chart.width - tick_room for x, _ in chart.ticks)
    rows = [bar.y for bar in chart.bars]
    assert all(later - earlier >= 30 for earlier, later in itertools.pairwise(rows))
    assert chart.height >= rows[-1] + chart.bars[-1].height + 12  # room for the ticks


def test_compact_columns_and_trend_keep_their_plot_inside_the_width() -> None:
    cases = [case(f"c{i:02d}", i % 6) for i in range(40)]
    chart = pass_rate_chart(cases, COMPACT_CHART_WIDTH)
    assert not chart.horizontal and chart.width == COMPACT_CHART_WIDTH
    assert chart.bars[-1].x + chart.bars[-1].width == pytest.approx(
        chart.plot_x + chart.plot_width - 1, abs=0.05
    )
    rates = [RunRate(f"run {i}", i / 4, 0.0, 1.0) for i in range(5)]
    trend = trend_chart(rates, COMPACT_CHART_WIDTH)
    assert trend is not None and trend.width == COMPACT_CHART_WIDTH
    assert max(p.x for p in trend.points) == trend.plot_x + trend.plot_width <= trend.width


def test_many_cases_get_columns_sorted_worst_first() -> None:
    cases = [case(f"c{i:02d}", i % 6) for i in range(40)]
    chart = pass_rate_chart(cases)
    assert not chart.horizontal
    # neighbours with the same result share a column, as wide as they are together
    assert [b.cases for b in chart.bars] == [7, 7, 7, 7, 6, 6]
    heights = [b.height for b in chart.bars]
    assert heights == sorted(heights) and len(set(heights)) == 6
    assert chart.bars[0].x == chart.plot_x
    ends = [b.x + b.width + 1 for b in chart.bars]  # + the gap between columns
    assert ends[-1] == pytest.approx(chart.plot_x + chart.plot_width, abs=0.02)
    assert [round(b.x, 1) for b in chart.bars[1:]] == [round(e, 1) for e in ends[:-1]]
    assert chart.bars[0].tooltip == (
        "7 cases with 0/5 passed (0%, 95% CI 0–43%): c00, c06, c12, c18, c24 and 2 more"
    )


def test_cases_with_distinct_results_keep_a_column_each() -> None:
    cases = [case(f"c{i:02d}", i, runs=40) for i in range(40)]
    chart = pass_rate_chart(cases)
    assert [b.cases for b in chart.bars] == [1] * 40
    assert chart.bars[3].tooltip == "c03: 3/40 passed (8%, 95% CI 3–20%)"


def test_an_interval_near_zero_or_one_keeps_its_digits() -> None:
    none_of_1000 = case("never", 0, runs=1000)
    all_of_1000 = case("always", 1000, runs=1000)
    assert none_of_1000.ci_high == pytest.approx(0.0038, abs=0.0001)
    chart = pass_rate_chart([none_of_1000, all_of_1000])
    assert chart.bars[0].tooltip == "never: 0/1000 passed (0%, 95% CI 0–0.4%)"
    assert chart.bars[1].tooltip == "always: 1000/1000 passed (100%, 95% CI 99.6–100%)"


def _text_width(text: str, font: float) -> float:
    return len(text) * font * CHAR_WIDTH


def test_histogram_title_caption_and_counts_never_collide() -> None:
    """At 10,000 trials: a long criterion label, five-digit totals, and neighbouring bins
    each holding thousands of scores (the counts used to run together, "20002000")."""
    label = "judge: the answer agrees with the reference answer on every fact"
    scores = [0.05] * 2000 + [0.15] * 2000 + [0.25] * 2000 + [0.95] * 1999 + [1.0] * 2001
    trials = [
        TrialResult(
            trial=Trial(
                case_id=f"c{i}", trial_index=0, started_at=datetime(2026, 1, 1, tzinfo=UTC)
            ),
            criteria=[
                CriterionResult(
                    criterion="judge", label=label, status="passed", score=score, threshold=0.85
                )
            ],
            status="passed",
        )
        for i, score in enumerate(scores)
    ]
    (hist,) = score_histograms(trials)
    assert hist.total == 10_000
    # the title has its own line, clipped to the plot's width; the total sits under it
    assert hist.label.endswith("…") and label.startswith(hist.label[:-1])
    assert _text_width(hist.label, TITLE_FONT) <= hist.plot_width
    assert hist.caption == "n = 10,000 · threshold 0.85"
    assert _text_width(hist.caption, CAPTION_FONT) <= hist.plot_width
    assert hist.caption_y - hist.title_y >= TITLE_FONT
    # counts over the columns: short, each narrower than the step between columns, and
    # the tallest one's text clears the caption
    counts = [b.count_text for b in hist.bins if b.count]
    assert counts == ["2.0k", "2.0k", "2.0k", "2.0k", "2.0k"]
    step = hist.bins[1].x - hist.bins[0].x
    assert all(len(b.count_text) <= COUNT_CHARS for b in hist.bins)
    assert _text_width("9.9k", COUNT_FONT) < step - 2
    tallest = min(b.y for b in hist.bins)
    assert tallest - 2 - COUNT_FONT >= hist.caption_y + 2
    assert hist.bins[0].tooltip == "score [0.0, 0.1): 2,000 trial(s)"


def test_the_stylesheet_uses_the_font_sizes_the_layout_assumes() -> None:
    css = str(asset("report.css"))

    def size(selector: str) -> float:
        rule = re.search(re.escape(selector) + r"[^{]*\{[^}]*font-size: ([0-9.]+)px", css)
        assert rule, selector
        return float(rule.group(1))

    assert size(".hist .htitle") == TITLE_FONT
    assert size(".hist .tick") == CAPTION_FONT
    assert size(".bin .count") == COUNT_FONT


@pytest.mark.parametrize(
    ("rate", "low", "high", "classes"),
    [
        (1.0, None, None, "w100"),
        (0.0, None, None, "w0"),
        (0.6, 0.231, 0.882, "w60 l23 h89"),
        (0.999, 0.994, 1.0, "w99 l99 h100"),  # not full: it is not 100%
        (0.001, 0.0, 0.006, "w1 l0 h1"),  # not empty: some trials passed
    ],
)
def test_a_rate_bar_is_drawn_in_whole_steps_that_never_misstate_the_rate(
    rate: float, low: float | None, high: float | None, classes: str
) -> None:
    assert bar_classes(rate, low, high) == classes


def test_every_rate_bar_step_has_its_rule() -> None:
    css = rate_bar_css()
    for step in (0, 1, 57, 99, 100):
        for prop in ("w", "l", "h"):
            assert f".{prop}{step}{{--{prop}:{step}}}" in css
    assert ".w101" not in css
    # the bar's own rule reads exactly those properties
    style = str(asset("report.css"))
    assert "var(--w)" in style and "var(--l)" in style and "var(--h)" in style
