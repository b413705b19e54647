"""How an expected JSON value is matched against an actual one: equal, contained, or a
subset of it. Tool mocks match a call's arguments as a subset; a component case's
``output_match`` names one of the three for its output."""

from __future__ import annotations

import json
from typing import Any, Literal

__all__ = ["OutputMatch", "contains", "json_equal", "json_subset", "matches"]

OutputMatch = Literal["exact", "contains", "json_subset"]
"""How an output is compared with the expected one: JSON-equal, containing it (a
substring of a text, an element of a list), or holding it as a JSON subset."""


def json_subset(expected: Any, actual: Any) -> bool:
    """Whether ``expected`` is a subset of ``actual``: every key of an expected object is in
    the actual one with a matching value, recursively; anything else is compared equal
    (``1 == 1.0``)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and json_subset(value, actual[key]) for key, value in expected.items()
        )
    return json_equal(expected, actual)


def json_equal(expected: Any, actual: Any) -> bool:
    """Whether two JSON values are equal, as JSON sees them: ``1 == 1.0``, but ``true`` is
    not ``1`` and ``"1"`` is not ``1``."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and expected.keys() == actual.keys()
            and all(json_equal(value, actual[key]) for key, value in expected.items())
        )
    if isinstance(expected, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(expected) == len(actual)
            and all(json_equal(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return bool(expected == actual)


def contains(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` contains ``expected``: a substring of a text (a non-text expected
    value as its JSON), or an element of a list (JSON-equal)."""
    if isinstance(actual, str):
        needle = expected if isinstance(expected, str) else json.dumps(expected)
        return needle in actual
    if isinstance(actual, list | tuple):
        return any(json_equal(expected, item) for item in actual)
    return False


def matches(how: OutputMatch, expected: Any, actual: Any) -> bool:
    """Whether ``actual`` matches ``expected`` the way ``how`` says."""
    if how == "contains":
        return contains(expected, actual)
    if how == "json_subset":
        return json_subset(expected, actual)
    return json_equal(expected, actual)
