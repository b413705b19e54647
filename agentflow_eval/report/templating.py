"""The jinja2 environment shared by the report pages: templates from the package,
autoescaping always on, undefined names an error, and the number formats people read
(:mod:`~agentflow_eval.report.formats`) as filters.

Inline assets (``*.css``, ``*.js`` beside the templates) are read as exact text so their
CSP hashes match what the page contains byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import resources

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from agentflow_eval.report.charts import bar_classes, rate_bar_css
from agentflow_eval.report.formats import (
    format_ci,
    format_cost,
    format_count,
    format_count_short,
    format_duration_ms,
    format_pct,
    format_score,
    format_time,
)
from agentflow_eval.report.spend import case_spend_cells, cost_text, latency_strip

__all__ = ["STYLE", "asset", "compact", "compact_chunks", "environment", "page_style"]

STYLE = "report.css"

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
        count_short=format_count_short,
        score=format_score,
        utc=format_time,
        usage_cost=cost_text,
        spend_cells=case_spend_cells,
    )
    env.globals.update(bar_classes=bar_classes, latency_strip=latency_strip)
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


@cache
def page_style() -> Markup:
    """The pages' stylesheet: ``report.css`` and the generated rate-bar steps."""
    return Markup(str(asset(STYLE)) + rate_bar_css())
