"""The numbers people read in the reports: percentages and intervals that never round a
fraction strictly between 0 and 1 to 0% or 100%, and counts short enough for chart labels."""

from __future__ import annotations

import pytest

from agentflow_eval.report.formats import format_ci, format_count_short, format_pct
from agentflow_eval.report.templating import environment
from agentflow_eval.run.stats import wilson_interval


@pytest.mark.parametrize(
    ("passed", "runs", "text"),
    [
        (0, 1000, "0–0.4%"),  # was "0–0%": the upper bound is 0.38%
        (1000, 1000, "99.6–100%"),
        (0, 100_000, "0–0.004%"),
        (3, 5, "23–88%"),
        (0, 5, "0–43%"),
        (5, 5, "57–100%"),
    ],
)
def test_intervals_keep_the_digits_that_tell_them_from_0_and_100(
    passed: int, runs: int, text: str
) -> None:
    assert format_ci(*wilson_interval(passed, runs)) == text


def test_the_ci_filter_is_the_same_function() -> None:
    low, high = wilson_interval(0, 1000)
    rendered = environment().from_string("{{ low | ci(high) }}").render(low=low, high=high)
    assert rendered == "0–0.4%"


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (0.0, 0, "0%"),
        (1.0, 0, "100%"),
        (0.4567, 0, "46%"),
        (0.4567, 1, "45.7%"),
        (0.999, 0, "99.9%"),  # 999 of 1,000 is not 100%
        (0.001, 0, "0.1%"),
        (0.99996, 0, "99.996%"),
        (1e-9, 0, "<0.001%"),
        (1 - 1e-9, 0, ">99.999%"),
        (None, 0, "–"),
    ],
)
def test_percentages_never_round_a_fraction_to_0_or_100(
    value: float | None, digits: int, text: str
) -> None:
    assert format_pct(value, digits) == text


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1.0k"),
        (2000, "2.0k"),
        (1260, "1.3k"),
        (9949, "9.9k"),
        (9950, "10k"),
        (10_000, "10k"),
        (999_499, "999k"),
        (999_500, "1.0M"),
        (1_234_567, "1.2M"),
    ],
)
def test_short_counts_fit_four_characters(count: int, text: str) -> None:
    assert format_count_short(count) == text
    assert len(text) <= 4
