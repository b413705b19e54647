"""Run data in Markdown (the Prefect summary, ``compare --format markdown``): what would be
read as Markdown or HTML where it stands is escaped, so it renders as the very text it
is, and nothing else is (no backslash before an ordinary bracket, plus or underscore)."""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from agentflow_eval.report.markdown import md_text

RENDER = MarkdownIt("commonmark").enable(["table", "strikethrough"])

TRICKY = [
    "weather_lookup_simple",
    "_private_ and __init__ and *stars* and **bold**",
    "a_b_ c",
    "`code` and [link](http://x) and ![img](y)",
    "<script>alert(1)</script> & &amp; &#60;",
    "# not a heading",
    "title ##",
    "> not a quote",
    "- not a list",
    "+ not a list",
    "1. not a list",
    "12) not a list",
    "=== not an underline",
    "a | b",
    "~~not struck~~ ~x~",
    "back\\slash \\* kept",
    "ROUGE-1 >= 0.8 (+5 pts) #1 !important {braces} é_é",
]


def _shown(rendered: str) -> str:
    """The text a reader sees (tags dropped, entities read)."""
    return html.unescape(re.sub(r"<[^>]+>", "", rendered)).strip()


@pytest.mark.parametrize("text", TRICKY)
def test_run_data_renders_as_itself_in_a_paragraph_a_heading_and_a_table(text: str) -> None:
    escaped = md_text(text)
    for document, tags in (
        (escaped, {"p"}),
        (f"### {escaped}", {"h3"}),
        (f"| case |\n|---|\n| {escaped} |", {"table", "thead", "tbody", "tr", "th", "td"}),
    ):
        rendered = RENDER.render(document)
        assert set(re.findall(r"</?([a-z0-9]+)", rendered)) == tags, rendered
        shown = _shown(rendered)
        assert shown.endswith(text), (document, rendered)


def test_ordinary_characters_are_left_as_they_are() -> None:
    text = "weather_lookup-simple.v2 (A-1001): 50% → 80%, p=0.03 #1 +5 pts, ROUGE-1 >= 0.8"
    assert md_text(text) == text
    assert md_text("Power (80%, α 0.05): 10 runs") == "Power (80%, α 0.05): 10 runs"
