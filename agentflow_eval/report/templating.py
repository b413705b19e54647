"""The jinja2 environment shared by the report pages: templates from the package,
autoescaping always on, undefined names an error, and the number formats people read.

Inline assets (``*.css``, ``*.js`` beside the templates) are read as exact text so their
CSP hashes match what the page contains byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from functools import cache
from importlib import resources

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

__all__ = [
    "asset",
    "compact",
    "compact_chunks",
    "environment",
    "format_cost",
    "format_duration_ms",
    "format_pct",
]

# Indentation between tags: the templates keep it for their readers; a 200-case page
# does not need it. Escaped text never holds a raw ">", so only markup is touched.
_INDENT = re.compile(r">[ \t]*\n\s*<")


def compact(page: str) -> str:
    """``page`` without the indentation between its tags (one newline is kept)."""
    return _INDENT.sub(">\n<", page)


COMPACT_BUFFER = 1 << 16
"""Characters :func:`compact_chunks` gathers before it compacts and passes them on."""


def compact_chunks(chunks: Iterable[str], buffer: int = COMPACT_BUFFER) -> Iterator[str]:
    """:func:`compact` over a page that arrives in pieces: the pieces joined equal
    ``compact`` of the whole page, while at most about ``buffer`` characters are held.

    Text is cut just after a ``<``: every run :func:`compact` removes ends at the first
    ``<`` after its ``>``, so no run can span such a cut.
    """
    pending: list[str] = []
    size = 0
    for chunk in chunks:
        pending.append(chunk)
        size += len(chunk)
        if size < buffer:
            continue
        text = "".join(pending)
        cut = text.rfind("<") + 1
        if cut == 0:  # no "<" yet: keep gathering
            pending, size = [text], len(text)
            continue
        yield compact(text[:cut])
        pending, size = [text[cut:]], len(text) - cut
    if pending:
        yield compact("".join(pending))


def format_pct(value: float | None, digits: int = 0) -> str:
    """0.4567 -> ``46%``; None -> ``–``."""
    if value is None:
        return "–"
    return f"{value * 100:.{digits}f}%"


def format_ci(low: float, high: float) -> str:
    """The 95% interval as ``23–88%``."""
    return f"{low * 100:.0f}–{high * 100:.0f}%"


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
    return "–" if value is None else f"{value:,}"


def format_score(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def format_time(value: datetime) -> str:
    """A timestamp in UTC, to the second."""
    moment = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


@cache
def environment() -> Environment:
    """The shared environment (built once)."""
    env = Environment(
        loader=PackageLoader("agentflow_eval.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters.update(
        pct=format_pct,
        ci=format_ci,
        dur=format_duration_ms,
        cost=format_cost,
        count=format_count,
        score=format_score,
        utc=format_time,
    )
    return env


@cache
def asset(name: str) -> Markup:
    """The exact text of an inline asset beside the templates, marked safe for the page
    (it is our own static file; nothing from a run is ever in it). The text must survive
    :func:`compact` unchanged, or its CSP hash would not match the page."""
    folder = resources.files("agentflow_eval.report").joinpath("templates")
    text = folder.joinpath(name).read_text("utf-8")
    lowered = text.lower()
    if "</script" in lowered or "</style" in lowered:
        raise ValueError(f"inline asset {name} must not contain a closing script or style tag")
    if compact(text) != text:
        raise ValueError(f"inline asset {name} has a line ending in '>' before one starting '<'")
    return Markup(text)
