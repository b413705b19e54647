"""Reading a report page without a browser: its cases and each case's packed details
(what the page's script draws when the case is opened), decoded."""

from __future__ import annotations

import re
from typing import Any

from agentflow_eval.report.case_details import unpack_case

__all__ = ["BASE64", "case_blocks", "case_details", "rows_of"]

BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
"""A block must be exactly this: nothing in it can end its attribute or its element."""

_CASE = re.compile(
    r'<details class="case [^"]*" id="case-\d+" data-state="\w+" data-rate="[0-9.]+" '
    r'data-id="([^"]*)" data-order="\d+">.*?<div class="case-body" data-details="([^"]*)">',
    re.S,
)


def case_blocks(page: str) -> dict[str, str]:
    """Each case's packed block by case id (as the page escapes the id), in page order."""
    found = _CASE.findall(page)
    assert len(found) == page.count('<details class="case '), "a case without its block"
    return dict(found)


def case_details(page: str, case_id: str) -> dict[str, Any]:
    """The decoded details of one case: ``{"facts": [...], "trials": [...]}``."""
    block = case_blocks(page)[case_id]
    assert BASE64.fullmatch(block), "a block holds base64 only"
    return unpack_case(block)


def rows_of(details: dict[str, Any], trial: int, turn: int = 0) -> list[dict[str, Any]]:
    """The side-by-side call rows of one turn of one trial."""
    rows: list[dict[str, Any]] = details["trials"][trial]["turns"][turn]["rows"]
    return rows
