"""Limits on what one span of someone else's trace may bring in: a text longer than the
limit is cut (its length said), a value nested deeper than the limit is replaced by a
note. A production trace can carry a whole document in one attribute, or a structure no
reader should walk; neither may stop the traces around it from being scored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Bounded", "Limits", "bounded"]


@dataclass(frozen=True)
class Limits:
    """How much of a span is kept."""

    max_chars: int
    """The longest text kept whole (an attribute's value, a status message)."""
    max_depth: int
    """The deepest a span's JSON may nest (OTLP's own nesting included: a span's
    attribute is four levels down, each ``kvlistValue`` adds four)."""


@dataclass(frozen=True)
class Bounded:
    """A value within the limits, and how many texts and nested values were cut."""

    value: Any
    cut_texts: int = 0
    cut_nesting: int = 0

    @property
    def cuts(self) -> int:
        return self.cut_texts + self.cut_nesting


def bounded(value: Any, limits: Limits) -> Bounded:
    """``value`` (parsed JSON) within ``limits``."""
    counts = [0, 0]

    def walk(item: Any, depth: int) -> Any:
        if isinstance(item, str):
            if len(item) <= limits.max_chars:
                return item
            counts[0] += 1
            more = len(item) - limits.max_chars
            return f"{item[: limits.max_chars]}… [cut: {more:,} characters more]"
        if isinstance(item, dict | list):
            if depth >= limits.max_depth:
                counts[1] += 1
                return _cut(item, f"[cut: nested deeper than {limits.max_depth} levels]")
            if isinstance(item, dict):
                return {key: walk(inner, depth + 1) for key, inner in item.items()}
            return [walk(inner, depth + 1) for inner in item]
        return item

    kept = walk(value, 0)
    return Bounded(kept, counts[0], counts[1])


def _cut(item: dict[str, Any] | list[Any], note: str) -> Any:
    """What stands for a value nested too deep, shaped as OTLP JSON has it there, so the
    span around it still reads: an attribute keeps its key and gets the note as its
    value; an ``AnyValue``, a list of them, or a list of attributes becomes the note in
    that shape."""
    if isinstance(item, list):
        first = item[0] if item else None
        if isinstance(first, dict) and "key" in first:
            return [{"key": "cut", "value": {"stringValue": note}}]
        return [{"stringValue": note}]
    if "key" in item:
        key = item["key"]
        return {"key": key if isinstance(key, str) else "cut", "value": {"stringValue": note}}
    values = item.get("values")
    if isinstance(values, list):
        return {"values": _cut(values, note)}
    return {"stringValue": note}
