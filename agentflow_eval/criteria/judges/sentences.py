"""Splitting an answer into sentences, for judges that label claims one by one.

Rules, in order:

1. Lines: a blank line, a list item (``-``, ``*``, ``•``, ``1.``, ``2)``), a heading
   (``#``), and a line after a heading or after one ending in ``.!?:`` start a new
   block; other line breaks are wraps inside a sentence. List and heading markers are
   removed.
2. Inside a block, a sentence ends at ``.``, ``!``, ``?`` or ``…`` (plus any closing
   quotes or brackets) followed by whitespace and a capital letter, digit, quote or
   bracket — unless the word before the period is a known abbreviation (``Dr.``,
   ``e.g.``, ``U.S.``) or a single-letter initial (``J. R. R. Tolkien``). Decimals
   (``72.5``) and URLs have no whitespace after the period and never split.
3. Pieces with no letter or digit are dropped.
"""

from __future__ import annotations

import re

__all__ = ["split_sentences"]

_ABBREVIATIONS = frozenset(
    {
        "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "vs", "approx",
        "no", "nos", "fig", "figs", "vol", "ch", "sec", "dept", "est", "inc", "ltd", "co",
        "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
        "nov", "dec", "mon", "tue", "wed", "thu", "fri", "sat", "sun", "e.g", "i.e",
        "cf", "al", "u.s", "u.k", "a.m", "p.m",
    }
)  # fmt: skip

_LIST_MARKER = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)]|#{1,6})\s+")
_BOUNDARY = re.compile(r"""[.!?…]+["'”’)\]]*(?=\s+["'“‘(\[]?[A-Z0-9])""")
_WORD_BEFORE = re.compile(r"""(?:^|[\s("'“‘\[])([A-Za-z][A-Za-z.]*)\.$""")
_HAS_CONTENT = re.compile(r"\w")


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, trimmed, in order (see the module docstring)."""
    sentences: list[str] = []
    for block in _blocks(text):
        sentences.extend(_split_block(block))
    return [s for s in sentences if _HAS_CONTENT.search(s)]


def _blocks(text: str) -> list[str]:
    blocks: list[str] = []
    current: list[str] = []
    after_heading = False
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.strip()
        starts_block = (
            not line
            or after_heading
            or _LIST_MARKER.match(line) is not None
            or (bool(current) and current[-1].endswith((".", "!", "?", ":", "…")))
        )
        if starts_block and current:
            blocks.append(" ".join(current))
            current = []
        if line:
            after_heading = line.startswith("#")
            current.append(_LIST_MARKER.sub("", line, count=1))
    if current:
        blocks.append(" ".join(current))
    return blocks


def _split_block(block: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(block):
        end = match.end()
        if match.group().startswith(".") and _is_abbreviation(block[start : match.start() + 1]):
            continue
        pieces.append(block[start:end].strip())
        start = end
    tail = block[start:].strip()
    if tail:
        pieces.append(tail)
    return pieces


def _is_abbreviation(text_up_to_period: str) -> bool:
    """True when the period ending ``text_up_to_period`` belongs to an abbreviation or
    an initial rather than ending a sentence."""
    match = _WORD_BEFORE.search(text_up_to_period)
    if match is None:
        return False
    word = match.group(1)
    if len(word) == 1 and word.isupper():
        return True  # an initial: "J. Smith"
    return word.lower().rstrip(".") in _ABBREVIATIONS
