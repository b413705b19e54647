"""Side-by-side alignment of expected and actual tool calls."""

from __future__ import annotations

from agentflow_eval.models.results import RecordedToolCall
from agentflow_eval.report.alignment import align_calls, compute_matches


def call(name: str, **args: object) -> RecordedToolCall:
    return RecordedToolCall(name=name, args=dict(args))


def shape(rows) -> list[tuple[str, str | None, str | None]]:  # type: ignore[no-untyped-def]
    return [
        (r.status, r.expected.name if r.expected else None, r.actual.name if r.actual else None)
        for r in rows
    ]


def test_all_matched_in_order() -> None:
    calls = [call("a", x=1), call("b", y=2)]
    rows = align_calls(calls, list(calls))
    assert shape(rows) == [("match", "a", "a"), ("match", "b", "b")]
    assert all(r.differing == frozenset() for r in rows)


def test_same_tool_other_arguments_is_one_row_naming_the_differences() -> None:
    expected = [call("get_weather", location="London")]
    actual = [call("get_weather", location="London, UK", units="metric")]
    (row,) = align_calls(expected, actual)
    assert row.status == "args"
    assert row.differing == frozenset({"location", "units"})


def test_missing_call_sits_before_the_next_matched_call() -> None:
    expected = [call("a"), call("b"), call("c")]
    actual = [call("a"), call("c"), call("z")]
    rows = align_calls(expected, actual, options={"match_type": "IN_ORDER"})
    assert shape(rows) == [
        ("match", "a", "a"),
        ("missing", "b", None),
        ("match", "c", "c"),
        ("extra", None, "z"),
    ]


def test_missing_calls_after_the_last_actual_call_come_last() -> None:
    rows = align_calls([call("a"), call("b")], [call("a")])
    assert shape(rows) == [("match", "a", "a"), ("missing", "b", None)]


def test_verdict_from_the_criterion_is_used_when_it_fits() -> None:
    expected = [call("a"), call("a")]
    actual = [call("a"), call("a")]
    # the criterion matched expected 0 to actual 1 and expected 1 to actual 0
    rows = align_calls(expected, actual, matched=[1, 0])
    assert [r.actual_index for r in rows] == [0, 1]
    assert [r.expected is expected[1] for r in rows] == [True, False]


def test_inconsistent_verdict_is_recomputed() -> None:
    expected = [call("a"), call("b")]
    actual = [call("a"), call("b")]
    for bad in ([0], [0, 5], [0, 0], ["x", 1]):
        rows = align_calls(expected, actual, matched=bad)
        assert shape(rows) == [("match", "a", "a"), ("match", "b", "b")], bad


def test_compute_matches_follows_the_configured_match_type() -> None:
    expected = [call("a"), call("b")]
    actual = [call("b"), call("a")]
    assert compute_matches(expected, actual, {"match_type": "EXACT"}) == [None, None]
    assert compute_matches(expected, actual, {"match_type": "any_order"}) == [1, 0]
    subset = {"match_type": "EXACT", "args_match": "subset"}
    assert compute_matches([call("a", x=1)], [call("a", x=1, y=2)], subset) == [0]
