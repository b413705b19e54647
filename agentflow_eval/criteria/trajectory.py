"""``tool_trajectory_avg_score``: did the agent call the expected tools, per invocation?

Each invocation's expected calls are aligned with the calls the agent made in that turn
under a match type, and the invocation gets a score; the criterion's score is the mean
over invocations (a turn the trial never reached scores 0).

Match types (with partial credit by default):

- ``EXACT``: same calls in the same positions, nothing extra or missing. 0 when the
  numbers of calls differ; otherwise the fraction of positions that match.
- ``IN_ORDER``: the expected calls appear in the actual calls in order; extra calls are
  allowed. Score: the longest in-order run of expected calls found, over the number
  expected. (A greedy scan would count only an unbroken *prefix*, so a missing first
  call would zero the rest; the longest matching subsequence gives partial credit for
  every expected call made in order, and equals the greedy result whenever the whole
  trajectory matches.)
- ``ANY_ORDER``: each expected call is matched to a distinct actual call, in any order;
  extra calls are allowed. Score: the most expected calls that can be matched at once,
  over the number expected.

No expected calls scores 1.0, except under ``EXACT`` when the agent did call tools (the
lengths differ). ``scoring: all_or_nothing`` gives Google ADK's per-invocation 1.0/0.0:
1.0 only when the whole invocation matches.

Arguments are compared per ``args_match``: ``exact`` (deep equality, the default),
``ignore`` (tool names only) or ``subset`` (the expected arguments are present with equal
values; the agent may pass more). ``tool_args_match`` overrides the mode per tool name.

A ``conversation_scenario`` case (a simulated user) has no expected calls, so the
criterion is skipped for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol

from pydantic import Field, WithJsonSchema, field_validator, model_validator

from agentflow_eval.criteria.base import CriterionContext, scored, skipped, threshold_of
from agentflow_eval.criteria.invocations import paired_turns
from agentflow_eval.criteria.options import CriterionOptions, lower_case
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import CriterionResult

__all__ = [
    "ARGS_MODES",
    "MATCH_TYPES",
    "SCORINGS",
    "ArgsMatch",
    "CallLike",
    "CallMatcher",
    "InvocationMatch",
    "MatchType",
    "ToolTrajectoryCriterion",
    "TrajectoryOptions",
    "align_any_order",
    "align_exact",
    "align_in_order",
    "args_comparer",
    "match_invocation",
]

MatchType = Literal["EXACT", "IN_ORDER", "ANY_ORDER"]
ArgsMatch = Literal["exact", "ignore", "subset"]
TrajectoryScoring = Literal["partial", "all_or_nothing"]

MATCH_TYPES: tuple[str, ...] = ("EXACT", "IN_ORDER", "ANY_ORDER")
ARGS_MODES: tuple[str, ...] = ("exact", "ignore", "subset")
SCORINGS: tuple[str, ...] = ("partial", "all_or_nothing")


class CallLike(Protocol):
    """A tool call as far as matching cares: expected (``ToolCall``) or recorded
    (``RecordedToolCall``)."""

    @property
    def name(self) -> str: ...

    @property
    def args(self) -> dict[str, Any]: ...


ArgsComparer = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
"""``(expected_args, actual_args) -> bool``."""

CallPredicate = Callable[[CallLike, CallLike], bool]
"""``(expected_call, actual_call) -> bool``."""

Alignment = list[int | None]
"""For each expected call, the index of the actual call it matched, or ``None``."""


# --- argument comparison: one function per mode ---------------------------------------


def args_exact(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """The same arguments with equal values, nothing more, nothing less."""
    return dict(expected) == dict(actual)


def args_ignore(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Arguments are not compared."""
    return True


def args_subset(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Every expected argument is present with an equal value; extra ones are allowed."""
    return all(key in actual and actual[key] == value for key, value in expected.items())


_ARGS_COMPARERS: dict[str, ArgsComparer] = {
    "exact": args_exact,
    "ignore": args_ignore,
    "subset": args_subset,
}


def args_comparer(mode: str) -> ArgsComparer:
    """The argument comparison for ``mode``; a ValueError names the allowed modes."""
    try:
        return _ARGS_COMPARERS[mode]
    except KeyError:
        raise ValueError(
            f"unknown args match mode {mode!r}; expected one of {', '.join(ARGS_MODES)}"
        ) from None


@dataclass(frozen=True)
class CallMatcher:
    """Whether an actual call satisfies an expected one: the same tool name, and
    arguments that agree under the tool's mode (``tool_args_match``, else ``args_match``)."""

    args_match: str = "exact"
    tool_args_match: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        args_comparer(self.args_match)
        for tool, mode in self.tool_args_match.items():
            try:
                args_comparer(mode)
            except ValueError as exc:
                raise ValueError(f"tool_args_match[{tool!r}]: {exc}") from None

    def mode_for(self, tool: str) -> str:
        return self.tool_args_match.get(tool, self.args_match)

    def __call__(self, expected: CallLike, actual: CallLike) -> bool:
        if expected.name != actual.name:
            return False
        return args_comparer(self.mode_for(expected.name))(expected.args, actual.args)


# --- alignment: one function per match type -------------------------------------------


def align_exact(
    expected: Sequence[CallLike], actual: Sequence[CallLike], same: CallPredicate
) -> Alignment:
    """Position by position: expected call ``i`` matches actual call ``i`` or nothing."""
    return [
        index if index < len(actual) and same(call, actual[index]) else None
        for index, call in enumerate(expected)
    ]


def align_in_order(
    expected: Sequence[CallLike], actual: Sequence[CallLike], same: CallPredicate
) -> Alignment:
    """The longest subsequence of expected calls found in order among the actual calls
    (other calls may come in between), earliest actual calls first."""
    n, m = len(expected), len(actual)
    # longest[i][j]: the most expected[i:] calls matchable in order within actual[j:].
    longest = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            take = 1 + longest[i + 1][j + 1] if same(expected[i], actual[j]) else 0
            longest[i][j] = max(take, longest[i + 1][j], longest[i][j + 1])
    alignment: Alignment = [None] * n
    i = j = 0
    while i < n and j < m:
        if same(expected[i], actual[j]) and longest[i][j] == 1 + longest[i + 1][j + 1]:
            alignment[i] = j
            i, j = i + 1, j + 1
        elif longest[i][j + 1] >= longest[i + 1][j]:
            j += 1
        else:
            i += 1
    return alignment


def align_any_order(
    expected: Sequence[CallLike], actual: Sequence[CallLike], same: CallPredicate
) -> Alignment:
    """As many expected calls as possible matched to distinct actual calls, in any order
    (a maximum bipartite matching, so a loose expectation never takes the only call a
    stricter one could use)."""
    owner: dict[int, int] = {}  # actual index -> expected index

    def claim(i: int, visited: set[int]) -> bool:
        for j, call in enumerate(actual):
            if j in visited or not same(expected[i], call):
                continue
            visited.add(j)
            if j not in owner or claim(owner[j], visited):
                owner[j] = i
                return True
        return False

    for i in range(len(expected)):
        claim(i, set())
    alignment: Alignment = [None] * len(expected)
    for j, i in owner.items():
        alignment[i] = j
    return alignment


_ALIGNERS: dict[str, Callable[[Sequence[CallLike], Sequence[CallLike], CallPredicate], Alignment]]
_ALIGNERS = {"EXACT": align_exact, "IN_ORDER": align_in_order, "ANY_ORDER": align_any_order}


def _check_choice(kind: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"unknown {kind} {value!r}; expected one of {', '.join(allowed)}")


# --- one invocation -------------------------------------------------------------------


@dataclass(frozen=True)
class InvocationMatch:
    """How one invocation's actual calls matched its expected calls."""

    score: float
    matched: Alignment
    note: str | None = None

    @property
    def matched_count(self) -> int:
        return sum(index is not None for index in self.matched)


def match_invocation(
    expected: Sequence[CallLike],
    actual: Sequence[CallLike],
    *,
    match_type: str = "EXACT",
    matcher: CallPredicate | None = None,
    scoring: str = "partial",
) -> InvocationMatch:
    """Score one invocation's calls under ``match_type`` and ``scoring``."""
    _check_choice("match type", match_type, MATCH_TYPES)
    _check_choice("trajectory scoring", scoring, SCORINGS)
    same = matcher or CallMatcher()
    matched = _ALIGNERS[match_type](expected, actual, same)
    note: str | None = None
    if match_type == "EXACT" and len(expected) != len(actual):
        partial = 0.0
        note = f"EXACT needs {len(expected)} call(s), the agent made {len(actual)}"
    elif not expected:
        partial = 1.0
    else:
        partial = sum(index is not None for index in matched) / len(expected)
    if scoring == "all_or_nothing":
        return InvocationMatch(1.0 if partial == 1.0 else 0.0, matched, note)
    return InvocationMatch(partial, matched, note)


# --- the criterion --------------------------------------------------------------------


def _call_record(call: CallLike) -> dict[str, Any]:
    return {"name": call.name, "args": dict(call.args)}


@dataclass
class ToolTrajectoryCriterion:
    """Scores the agent's tool calls against each invocation's expected trajectory."""

    name: str
    threshold: float
    match_type: str = "EXACT"
    matcher: CallMatcher = field(default_factory=CallMatcher)
    scoring: str = "partial"
    label: str = field(init=False, default="")

    def __post_init__(self) -> None:
        _check_choice("match type", self.match_type, MATCH_TYPES)
        _check_choice("trajectory scoring", self.scoring, SCORINGS)
        parts = [f"trajectory {self.match_type}"]
        if self.matcher.args_match != "exact":
            parts.append(f"args {self.matcher.args_match}")
        if self.scoring == "all_or_nothing":
            parts.append("all-or-nothing")
        self.label = ", ".join(parts)

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        if ctx.case.conversation_scenario is not None:
            return skipped(
                self,
                f"case {ctx.case.eval_id!r} is a conversation_scenario (simulated user): "
                "it has no expected tool trajectory to compare against",
            )
        rows: list[dict[str, Any]] = []
        problems: list[str] = []
        for number, (invocation, turn) in enumerate(paired_turns(ctx.case, ctx.trial), 1):
            expected = invocation.expected_tool_trajectory
            row: dict[str, Any] = {
                "invocation_id": invocation.invocation_id,
                "expected": [_call_record(call) for call in expected],
            }
            if turn is None:
                row |= {"actual": [], "matched": [None] * len(expected), "score": 0.0}
                row["missing_turn"] = True
                problems.append(f"invocation {number}: no turn recorded (the trial ended)")
            else:
                result = match_invocation(
                    expected,
                    turn.tool_calls,
                    match_type=self.match_type,
                    matcher=self.matcher,
                    scoring=self.scoring,
                )
                row |= {
                    "actual": [_call_record(call) for call in turn.tool_calls],
                    "matched": result.matched,
                    "score": result.score,
                    "missing_turn": False,
                }
                if result.note:
                    row["note"] = result.note
                if result.score < 1.0:
                    problems.append(
                        f"invocation {number}: {result.matched_count}/{len(expected)} expected "
                        f"call(s) matched among {len(turn.tool_calls)} made"
                        + (f"; {result.note}" if result.note else "")
                    )
            rows.append(row)
        score = sum(row["score"] for row in rows) / len(rows)
        details = {
            "match_type": self.match_type,
            "scoring": self.scoring,
            "args_match": self.matcher.args_match,
            "tool_args_match": dict(self.matcher.tool_args_match),
            "invocations": rows,
        }
        return scored(self, score, details, reason="; ".join(problems) or None)


# --- its options and declaration --------------------------------------------------------

_ADK_MATCH_TYPES: dict[int, MatchType] = {0: "EXACT", 1: "IN_ORDER", 2: "ANY_ORDER"}
"""ADK's ``ToolTrajectoryCriterion.MatchType`` values, as its JSON dumps write them."""

_MATCH_TYPE_PATTERN = (
    r"^\s*([Ee][Xx][Aa][Cc][Tt]|[Ii][Nn][-_ ][Oo][Rr][Dd][Ee][Rr]"
    r"|[Aa][Nn][Yy][-_ ][Oo][Rr][Dd][Ee][Rr])\s*$"
)
_MATCH_TYPE_SCHEMA = WithJsonSchema(
    {"anyOf": [{"type": "string", "pattern": _MATCH_TYPE_PATTERN}, {"enum": [0, 1, 2]}]}
)
"""ADK writes the match type's number (0, 1, 2) and reads its name in any case, with
``-`` or a space for ``_``."""

_ARGS_MATCH_SCHEMA = WithJsonSchema({"enum": [*ARGS_MODES, *(m.upper() for m in ARGS_MODES)]})
"""The options lower-case the mode themselves; either spelling is accepted."""


class TrajectoryOptions(CriterionOptions):
    """Options of tool_trajectory_avg_score."""

    match_type: Annotated[MatchType, _MATCH_TYPE_SCHEMA] = "EXACT"
    """EXACT (same calls, same order, nothing extra), IN_ORDER (expected calls in order,
    extras allowed) or ANY_ORDER (or ADK's 0, 1, 2)."""
    args_match: Annotated[ArgsMatch, _ARGS_MATCH_SCHEMA] = "exact"
    """Compare arguments exactly, ignore them, or require the expected ones as a subset."""
    tool_args_match: dict[str, ArgsMatch] = Field(default_factory=dict)
    """args_match per tool name, over args_match."""
    scoring: TrajectoryScoring = "partial"
    """Partial credit per turn, or ADK's all_or_nothing."""
    ignore_args: bool = False
    """ADK's spelling of ``args_match: ignore``."""

    @field_validator("match_type", mode="before")
    @classmethod
    def _adk_match_type(cls, value: Any) -> Any:
        # ADK writes the enum's number in JSON dumps and accepts "in-order", "in order".
        if isinstance(value, int) and not isinstance(value, bool):
            return _ADK_MATCH_TYPES.get(value, value)
        if isinstance(value, str):
            return value.strip().upper().replace("-", "_").replace(" ", "_")
        return value

    @field_validator("args_match", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return lower_case(value)

    @model_validator(mode="after")
    def _adk_ignore_args(self) -> TrajectoryOptions:
        if self.ignore_args:
            if "args_match" in self.model_fields_set and self.args_match != "ignore":
                raise ValueError(
                    f"ignore_args: true contradicts args_match: {self.args_match!r}; give one"
                )
            self.args_match = "ignore"
        return self


@criterion(
    "tool_trajectory_avg_score",
    TrajectoryOptions,
    judges=("expected_tool_trajectory",),
    subject="tool_calls",
)
def build_tool_trajectory(
    name: str, options: TrajectoryOptions, config: EvalConfig
) -> ToolTrajectoryCriterion:
    """The tool calls against each turn's expected ones (default threshold 1.0)."""
    return ToolTrajectoryCriterion(
        name=name,
        threshold=threshold_of(options, 1.0),
        match_type=options.match_type,
        matcher=CallMatcher(options.args_match, dict(options.tool_args_match)),
        scoring=options.scoring,
    )
