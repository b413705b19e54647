"""Expected against actual tool calls of one turn, laid out side by side for the report.

The trajectory criterion decides which actual call satisfied which expected call (its
``details["invocations"][k]["matched"]``); when a run has no such verdict the same
matching is computed here with :func:`~agentflow_eval.criteria.trajectory.match_invocation`.
For display, an unmatched expected call is then paired with an unmatched actual call of
the same tool, so a wrong argument shows as one row with the differing arguments marked
rather than as one missing and one extra call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentflow_eval.criteria.trajectory import CallMatcher, match_invocation
from agentflow_eval.models.results import RecordedToolCall

__all__ = ["CallRow", "RowStatus", "align_calls", "compute_matches"]

RowStatus = Literal["match", "args", "missing", "extra"]
"""match: the expected call was made. args: the tool was called with other arguments.
missing: the expected call was not made. extra: a call nobody expected."""


@dataclass(frozen=True)
class CallRow:
    """One row of the side-by-side table: an expected call, an actual call, or both.

    ``differing`` names the arguments that differ between the two (``args`` rows only).
    """

    status: RowStatus
    expected: RecordedToolCall | None
    actual: RecordedToolCall | None
    actual_index: int | None
    differing: frozenset[str] = frozenset()


def compute_matches(
    expected: Sequence[RecordedToolCall],
    actual: Sequence[RecordedToolCall],
    options: Mapping[str, Any] | None = None,
) -> list[int | None]:
    """For each expected call, the index of the actual call that satisfies it (or None),
    matched as ``tool_trajectory_avg_score`` would with ``options`` (its config entry:
    ``match_type``, ``args_match``, ``tool_args_match``; EXACT and exact by default)."""
    options = options or {}
    matcher = CallMatcher(
        str(options.get("args_match", "exact")).lower(),
        dict(options.get("tool_args_match") or {}),
    )
    match_type = str(options.get("match_type", "EXACT")).upper()
    return match_invocation(expected, actual, match_type=match_type, matcher=matcher).matched


def _valid_matches(matched: Sequence[Any], n_expected: int, n_actual: int) -> bool:
    """A verdict from results.json is used only when it fits the calls at hand."""
    if len(matched) != n_expected:
        return False
    seen: set[int] = set()
    for index in matched:
        if index is None:
            continue
        if not isinstance(index, int) or not 0 <= index < n_actual or index in seen:
            return False
        seen.add(index)
    return True


def _differing_args(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> frozenset[str]:
    keys = set(expected) | set(actual)
    return frozenset(
        key
        for key in keys
        if key not in expected or key not in actual or expected[key] != actual[key]
    )


def align_calls(
    expected: Sequence[RecordedToolCall],
    actual: Sequence[RecordedToolCall],
    matched: Sequence[Any] | None = None,
    options: Mapping[str, Any] | None = None,
) -> list[CallRow]:
    """The rows of the side-by-side table, in the order the agent made its calls, with
    each expected call that was never made placed just before the next matched call.

    ``matched`` is the trajectory criterion's verdict; when missing or inconsistent with
    the calls it is recomputed from ``options``.
    """
    if matched is None or not _valid_matches(matched, len(expected), len(actual)):
        matched = compute_matches(expected, actual, options)
    pairs: dict[int, tuple[int, RowStatus]] = {
        i: (j, "match") for i, j in enumerate(matched) if j is not None
    }
    used = {j for j, _ in pairs.values()}
    for i, call in enumerate(expected):
        if i in pairs:
            continue
        for j, made in enumerate(actual):
            if j not in used and made.name == call.name:
                pairs[i] = (j, "args")
                used.add(j)
                break

    keyed: list[tuple[tuple[int, int, int], CallRow]] = []
    for i, call in enumerate(expected):
        if i in pairs:
            j, status = pairs[i]
            differing = _differing_args(call.args, actual[j].args) if status == "args" else None
            row = CallRow(status, call, actual[j], j, differing or frozenset())
            keyed.append(((j, 1, i), row))
        else:
            later = [pairs[k][0] for k in range(i + 1, len(expected)) if k in pairs]
            anchor = min(later) if later else len(actual)
            keyed.append(((anchor, 0, i), CallRow("missing", call, None, None)))
    for j, made in enumerate(actual):
        if j not in used:
            keyed.append(((j, 1, -1), CallRow("extra", None, made, j)))
    keyed.sort(key=lambda item: item[0])
    return [row for _, row in keyed]
