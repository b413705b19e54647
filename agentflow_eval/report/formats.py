"""The numbers people read in the reports, as text: percentages, intervals, durations,
money, counts, scores and times. One place, so the page, its charts' tooltips and the
trial details the page's script draws all say the same thing the same way.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = [
    "format_ci",
    "format_cost",
    "format_count",
    "format_count_short",
    "format_duration_ms",
    "format_pct",
    "format_score",
    "format_time",
]

_MAX_DIGITS = 3


def _percent_number(value: float, digits: int = 0) -> str:
    """``value`` (a fraction) as a percentage without the sign, to ``digits`` decimals,
    except that a fraction strictly between 0 and 1 never reads as 0 or 100: it gets
    just enough further decimals to show it is not (0.0038 -> ``0.4``, 0.999 -> ``99.9``),
    and past three, ``<0.001`` or ``>99.999``."""
    percent = value * 100
    text = f"{percent:.{digits}f}"
    if not 0 < value < 1:
        return text
    for places in range(digits, max(digits, _MAX_DIGITS) + 1):
        text = f"{percent:.{places}f}"
        if float(text) not in (0.0, 100.0):
            return text
    smallest = f"{10**-_MAX_DIGITS:.{_MAX_DIGITS}f}"
    return f"<{smallest}" if percent < 50 else f">{100 - 10**-_MAX_DIGITS:.{_MAX_DIGITS}f}"


def format_pct(value: float | None, digits: int = 0) -> str:
    """0.4567 -> ``46%``; 0.999 -> ``99.9%`` (not 100%); None -> ``–``."""
    if value is None:
        return "–"
    return f"{_percent_number(value, digits)}%"


def format_ci(low: float, high: float) -> str:
    """The 95% interval as ``23–88%``; bounds near 0 or 100% keep the decimals that tell
    them apart from it (0 of 1,000 passed: ``0–0.4%``)."""
    return f"{_percent_number(low)}–{_percent_number(high)}%"


def format_duration_ms(value: float | None) -> str:
    """Milliseconds as ``850 ms``, ``2.4 s``, ``4 min 12 s``."""
    if value is None:
        return "–"
    if value < 1000:
        return f"{value:.0f} ms"
    seconds = value / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def format_cost(value: float | None) -> str:
    """US dollars with enough digits for small sums; ``–`` when nothing was reported."""
    if not value:
        return "–"
    if value >= 1:
        return f"${value:,.2f}"
    if value >= 0.01:
        return f"${value:.3f}"
    return f"${value:.5f}"


def format_count(value: int | None) -> str:
    """``12,345``; None -> ``–``."""
    return "–" if value is None else f"{value:,}"


def format_count_short(value: int) -> str:
    """A count in at most four characters, for labels in narrow places: ``999``,
    ``1.2k``, ``12k``, ``120k``, ``1.2M``."""
    if value < 1000:
        return str(value)
    for scale, suffix in ((1000, "k"), (1_000_000, "M"), (1_000_000_000, "G")):
        short = value / scale
        if short < 9.95:
            return f"{short:.1f}{suffix}"
        if short < 999.5:
            return f"{short:.0f}{suffix}"
    return f"{value / 1_000_000_000:.0f}G"


def format_score(value: float | None) -> str:
    """A score to two decimals; None -> ``–``."""
    return "–" if value is None else f"{value:.2f}"


def format_time(value: datetime) -> str:
    """A timestamp in UTC, to the second."""
    moment = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
