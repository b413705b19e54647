"""The report's view model: a :class:`~agentflow_eval.models.results.RunResult` reshaped
into what the template shows.

Everything the page shows is computed here: which expected call each actual call
answers, which arguments differ, how long texts are clipped. The template lays out the
head of the page and one line per case; a case's trials go into the page as data
(:mod:`~agentflow_eval.report.case_details`) that its script lays out when the case is
opened. The head of the page (:func:`build_view`) needs only the run's summary and its
:class:`~agentflow_eval.report.digest.TrialDigest`; the cases (:func:`case_views`) are
built one at a time as the page is written, so no more than one case's trials are needed
at once. Long texts are clipped (tool results, tracebacks, details) so a 200 × 5 report stays
a page a browser opens quickly; each clip says how much it left out.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentflow_eval.files.case_trials import CaseWithTrials
from agentflow_eval.models.results import (
    CaseResult,
    CriterionResult,
    CriterionSummary,
    ExpectedTurn,
    HandoffEvent,
    ModelCallEvent,
    NodeEvent,
    RecordedToolCall,
    RunResult,
    ToolCallEvent,
    Trial,
    TrialResult,
    Turn,
)
from agentflow_eval.report.alignment import align_calls
from agentflow_eval.report.charts import (
    COMPACT_CHART_WIDTH,
    Histogram,
    PassRateChart,
    case_state,
    pass_rate_chart,
)
from agentflow_eval.report.digest import TrialDigest
from agentflow_eval.report.digest import json_text as _json
from agentflow_eval.report.spend import call_cost_text

__all__ = [
    "ArgView",
    "CallView",
    "CaseView",
    "Clipped",
    "CriterionView",
    "InvocationView",
    "ReportView",
    "RowView",
    "TrialView",
    "build_view",
    "case_views",
    "clip",
]

TRAJECTORY = "tool_trajectory_avg_score"
RESPONSE = "response_match_score"

ANSWER_LIMIT = 6000
USER_LIMIT = 2000
RESULT_LIMIT = 600
ARG_LIMIT = 400
DETAIL_LIMIT = 2000
TRACEBACK_LIMIT = 3000
PRINTED_LIMIT = 4000


@dataclass(frozen=True)
class Clipped:
    """A text cut to a length limit; ``omitted`` characters were left out."""

    text: str
    omitted: int = 0


def clip(text: str | None, limit: int) -> Clipped | None:
    """``text`` cut to ``limit`` characters (None stays None)."""
    if text is None:
        return None
    if len(text) <= limit:
        return Clipped(text)
    return Clipped(text[:limit], len(text) - limit)


@dataclass(frozen=True)
class ArgView:
    """One argument of a call; ``differs`` marks it when the other side disagrees."""

    name: str
    value: Clipped
    differs: bool


@dataclass(frozen=True)
class CallView:
    """A tool call as shown: name, arguments, and (for actual calls) what came back."""

    name: str
    args: list[ArgView]
    result: Clipped | None = None
    error: str | None = None
    duration_ms: float | None = None


@dataclass(frozen=True)
class RowView:
    """A side-by-side row: ``status`` is match, args, missing or extra."""

    status: str
    expected: CallView | None
    actual: CallView | None


@dataclass(frozen=True)
class TimelineEntry:
    """One event of a turn as the timeline shows it: when, what kind, who acted, what."""

    at_ms: float
    kind: str
    who: str | None
    text: Clipped


@dataclass(frozen=True)
class InvocationView:
    """One user turn of a trial: what was asked, the calls against the expected ones,
    the answer against the reference."""

    number: int
    invocation_id: str
    user_text: Clipped | None
    rows: list[RowView]
    expectation_known: bool
    reached: bool
    answer: Clipped | None
    reference: Clipped | None
    intermediate: list[Clipped]
    latency_ms: float | None
    tokens: int
    cost: str
    """What the turn's model calls cost, in words (:func:`call_cost_text`)."""
    trajectory_score: float | None = None
    note: str | None = None
    timeline: list[TimelineEntry] = field(default_factory=list)


@dataclass(frozen=True)
class CriterionView:
    """One criterion's verdict on one trial, with its details as short texts."""

    name: str
    label: str
    status: str
    score: float | None
    threshold: float | None
    reason: Clipped | None
    details: list[tuple[str, Clipped]]
    cost_usd: float
    latency_ms: float | None


@dataclass(frozen=True)
class ErrorView:
    kind: str
    message: Clipped
    type: str | None
    traceback: Clipped | None


@dataclass(frozen=True)
class TrialView:
    """One trial: its status, its turns, its verdicts, what it cost."""

    index: int
    status: str
    duration_ms: float
    tokens: int
    cost: str
    """What the trial's model calls cost, in words (:func:`call_cost_text`): never a $0
    for a cost nobody knows."""
    judge_cost_usd: float
    error: ErrorView | None
    invocations: list[InvocationView]
    criteria: list[CriterionView]
    problems: list[str]
    printed: list[tuple[str, Clipped]] = field(default_factory=list)
    """What the agent printed, by stream ("stdout", "stderr"), when it printed."""


@dataclass(frozen=True)
class CaseView:
    """One case across its trials."""

    order: int
    result: CaseResult
    state: str
    user_text: str
    trials: list[TrialView]


@dataclass(frozen=True)
class ReportView:
    """What the report template shows above the cases; the cases themselves come one at
    a time from :func:`case_views`."""

    run: RunResult
    title: str
    case_count: int
    state_counts: dict[str, int]
    criteria: list[CriterionSummary]
    pass_chart: PassRateChart
    compact_pass_chart: PassRateChart
    """The same chart drawn for a narrow page (the stylesheet shows one of the two)."""
    histograms: list[Histogram]
    settings: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def build_view(run: RunResult, digest: TrialDigest) -> ReportView:
    """The view of ``run``'s summary; ``digest`` holds what spans its trials (histograms,
    shared settings). ``run.trials`` is not read: it may be empty."""
    counts: dict[str, int] = defaultdict(int)
    for case in run.cases:
        counts[case_state(case)] += 1
    return ReportView(
        run=run,
        title=run.eval_set_name or run.eval_set_id,
        case_count=len(run.cases),
        state_counts=dict(counts),
        criteria=run.criteria,
        pass_chart=pass_rate_chart(run.cases),
        compact_pass_chart=pass_rate_chart(run.cases, COMPACT_CHART_WIDTH),
        histograms=digest.histograms(),
        settings={
            name: [(key, _detail_text(key, value)) for key, value in values.items()]
            for name, values in digest.shared_details().items()
        },
        notes=list(run.notes),
    )


def case_views(
    run: RunResult,
    cases: Iterable[CaseWithTrials],
    digest: TrialDigest,
) -> Iterator[CaseView]:
    """The view of each case with its trials, built as ``cases`` yields them (in
    ``run.cases`` order), so a page can be written one case at a time. Expected calls
    and references come from the results themselves (``CaseResult.expected``, then
    criterion details)."""
    trajectory_options = dict(run.config.get("criteria", {}).get(TRAJECTORY, {}) or {})
    shared = digest.shared_details()
    # not enumerate(cases): it keeps its last item (a case's trials) while reading the next
    orders = itertools.count()
    for case, trials in cases:
        expected = case.expected or None
        views = [_trial_view(t, expected, trajectory_options, shared) for t in trials]
        first_user = expected[0].user_text if expected else ""
        if not first_user and trials and trials[0].trial.turns:
            first_user = trials[0].trial.turns[0].user_text
        yield CaseView(next(orders), case, case_state(case), first_user, views)
        del trials  # let this case's trials go before the next case is read


def _verdict(result: TrialResult, name: str) -> CriterionResult | None:
    for verdict in result.criteria:
        if verdict.criterion == name:
            return verdict
    return None


def _detail_rows(verdict: CriterionResult | None) -> list[dict[str, Any]]:
    if verdict is None:
        return []
    rows = verdict.details.get("invocations")
    return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []


def _calls_from_details(raw: Any) -> list[RecordedToolCall] | None:
    if not isinstance(raw, list):
        return None
    calls = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return None
        args = item.get("args")
        calls.append(
            RecordedToolCall(name=item["name"], args=args if isinstance(args, dict) else {})
        )
    return calls


def _trial_view(
    result: TrialResult,
    expected: list[ExpectedTurn] | None,
    trajectory_options: Mapping[str, Any],
    shared: Mapping[str, Mapping[str, Any]],
) -> TrialView:
    trial = result.trial
    trajectory = _verdict(result, TRAJECTORY)
    trajectory_rows = _detail_rows(trajectory)
    # ROUGE rows exist only for invocations with a reference: find them by invocation id
    references = {
        str(row.get("invocation_id")): row for row in _detail_rows(_verdict(result, RESPONSE))
    }
    options = dict(trajectory_options)
    if trajectory is not None:
        for key in ("match_type", "args_match", "tool_args_match"):
            if key in trajectory.details:
                options[key] = trajectory.details[key]

    count = max(len(expected or []), len(trial.turns), len(trajectory_rows))
    invocations = []
    for number in range(count):
        wanted = expected[number] if expected is not None and number < len(expected) else None
        turn = trial.turns[number] if number < len(trial.turns) else None
        invocation_id = wanted.invocation_id if wanted else turn.invocation_id if turn else ""
        invocations.append(
            _invocation_view(
                number,
                wanted,
                turn,
                trajectory_rows[number] if number < len(trajectory_rows) else None,
                references.get(invocation_id),
                options,
            )
        )
    error = None
    if trial.error is not None:
        error = ErrorView(
            kind=trial.error.kind,
            message=clip(trial.error.message, DETAIL_LIMIT) or Clipped(""),
            type=trial.error.type,
            traceback=clip(trial.error.traceback, TRACEBACK_LIMIT),
        )
    usage = trial.usage
    criteria = [_criterion_view(v, shared.get(v.criterion, {})) for v in result.criteria]
    judge_cost = sum(v.usage.cost_usd for v in result.criteria if v.usage is not None)
    problems = [_problem(v) for v in result.criteria if v.status in ("failed", "not_evaluated")]
    return TrialView(
        index=trial.trial_index,
        status=result.status,
        duration_ms=trial.duration_ms,
        tokens=usage.total_tokens,
        cost=call_cost_text(usage),
        judge_cost_usd=judge_cost,
        error=error,
        invocations=invocations,
        criteria=criteria,
        problems=problems,
        printed=_printed(trial),
    )


def _printed(trial: Trial) -> list[tuple[str, Clipped]]:
    output = trial.agent_output
    if output is None:
        return []
    streams = (("stdout", output.stdout), ("stderr", output.stderr))
    return [(name, clip(text, PRINTED_LIMIT) or Clipped("")) for name, text in streams if text]


def _problem(verdict: CriterionResult) -> str:
    name = verdict.label or verdict.criterion
    if verdict.status == "not_evaluated":
        return f"{name}: not evaluated"
    score = "" if verdict.score is None else f" {verdict.score:.2f}"
    return f"{name}:{score}"


def _invocation_view(
    number: int,
    expected: ExpectedTurn | None,
    turn: Turn | None,
    trajectory_row: dict[str, Any] | None,
    response_row: dict[str, Any] | None,
    options: Mapping[str, Any],
) -> InvocationView:
    actual = turn.tool_calls if turn is not None else []
    expected_calls: list[RecordedToolCall] | None = expected.tool_calls if expected else None
    if expected_calls is None and trajectory_row is not None:
        expected_calls = _calls_from_details(trajectory_row.get("expected"))
    matched = trajectory_row.get("matched") if trajectory_row is not None else None
    if expected_calls is None:
        # Nothing says what this turn should have called (a simulated-user turn, or
        # results without expectations): list the calls without judging them.
        rows_view = [
            RowView("unknown", None, _call_view(call, frozenset(), True)) for call in actual
        ]
    else:
        aligned = align_calls(
            expected_calls, actual, matched if isinstance(matched, list) else None, options
        )
        rows_view = [
            RowView(
                row.status,
                _call_view(row.expected, row.differing, False) if row.expected else None,
                _call_view(row.actual, row.differing, True) if row.actual else None,
            )
            for row in aligned
        ]

    reference = expected.final_response if expected else None
    if (
        reference is None
        and response_row is not None
        and isinstance(response_row.get("expected"), str)
    ):
        reference = response_row["expected"]
    user_text = turn.user_text if turn is not None else (expected.user_text if expected else None)
    invocation_id = (
        turn.invocation_id if turn is not None else (expected.invocation_id if expected else "")
    )
    score = trajectory_row.get("score") if trajectory_row is not None else None
    note = trajectory_row.get("note") if trajectory_row is not None else None
    return InvocationView(
        number=number + 1,
        invocation_id=invocation_id,
        user_text=clip(user_text, USER_LIMIT),
        rows=rows_view,
        expectation_known=expected_calls is not None,
        reached=turn is not None,
        answer=clip(turn.final_response, ANSWER_LIMIT) if turn is not None else None,
        reference=clip(reference, ANSWER_LIMIT),
        intermediate=[
            c
            for c in (
                clip(text, USER_LIMIT) for text in (turn.intermediate_responses if turn else [])
            )
            if c
        ],
        latency_ms=turn.latency_ms if turn is not None else None,
        tokens=turn.usage.total_tokens if turn is not None else 0,
        cost=call_cost_text(turn.usage) if turn is not None else "–",
        trajectory_score=float(score) if isinstance(score, int | float) else None,
        note=note if isinstance(note, str) else None,
        timeline=timeline_of(turn) if turn is not None else [],
    )


_SERVED_BY = {"mock": "mocked", "fault": "injected fault", "policy": "unmocked: failed"}
"""How the timeline names what answered a call instead of its tool."""


def timeline_of(turn: Turn) -> list[TimelineEntry]:
    """The turn's events in order, each as a line: a step begins, control is handed on, a
    model is called (with its tokens), a tool is called (with its result or error), the
    agent says something."""
    entries = []
    for event in turn.events:
        text: str
        if isinstance(event, NodeEvent):
            kind, text = "step", " › ".join([*event.path, event.name])
        elif isinstance(event, HandoffEvent):
            kind, text = "handoff", f"{event.source or '?'} → {event.target}"
        elif isinstance(event, ModelCallEvent):
            parts = [event.model or "model", f"{event.usage.total_tokens} tok"]
            if event.latency_ms is not None:
                parts.append(f"{event.latency_ms:.0f} ms")
            kind, text = "model", " · ".join(parts)
        elif isinstance(event, ToolCallEvent):
            call = event.call
            outcome = f"error: {call.error}" if call.error else _json(call.result)
            kind, text = "tool", f"{call.name}({_json(call.args)}) → {outcome}"
            if call.served_by != "tool":
                text += f"  [{_SERVED_BY[call.served_by]}]"
        else:
            kind, text = ("answer" if event.final else "says"), event.text
        entries.append(
            TimelineEntry(event.at_ms, kind, event.author, clip(text, RESULT_LIMIT) or Clipped(""))
        )
    return entries


def _call_view(call: RecordedToolCall, differing: frozenset[str], actual: bool) -> CallView:
    args = [
        ArgView(name, clip(_json(value), ARG_LIMIT) or Clipped(""), name in differing)
        for name, value in call.args.items()
    ]
    if not actual:
        return CallView(call.name, args)
    result = None if call.result is None else clip(_json(call.result), RESULT_LIMIT)
    return CallView(call.name, args, result, call.error, call.duration_ms or None)


SHOWN_ELSEWHERE = frozenset({"expected", "actual", "matched"})
"""Per-invocation detail keys the report shows in its own layout (the side-by-side
calls, the answer against the reference), left out of the details text."""


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _scalar_text(value: Any) -> str:
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, float):
        return f"{value:.4g}"
    return _json(value)


def outline(value: Any, indent: str = "") -> list[str]:
    """Nested details (judge votes, rubric verdicts, per-invocation rows) as indented
    lines: a record's plain fields on one line, ``k: v · k: v``, its lists and records
    beneath it, list items marked ``-``."""
    if isinstance(value, dict):
        plain = [f"{k}: {_scalar_text(v)}" for k, v in value.items() if _is_scalar(v)]
        lines = [indent + " · ".join(plain)] if plain else []
        for key, item in value.items():
            if _is_scalar(item) or item in ([], {}):
                continue
            lines.append(f"{indent}{key}:")
            lines.extend(outline(item, indent + "  "))
        return lines
    if isinstance(value, list):
        if all(_is_scalar(item) for item in value):
            return [indent + _json(value)]
        lines = []
        for item in value:
            block = outline(item, indent + "  ")
            if block:
                block[0] = f"{indent}- {block[0][len(indent) + 2 :]}"
            lines.extend(block)
        return lines
    return [indent + _scalar_text(value)]


def _detail_text(key: str, value: Any) -> str:
    """One details entry as text (see :func:`outline`); per-invocation rows lose the
    fields shown elsewhere in the report."""
    if isinstance(value, str):
        return value
    if _is_scalar(value):
        return _scalar_text(value)
    if key == "invocations" and isinstance(value, list):
        value = [
            {k: v for k, v in row.items() if k not in SHOWN_ELSEWHERE}
            if isinstance(row, dict)
            else row
            for row in value
        ]
    return "\n".join(outline(value))


def _criterion_view(verdict: CriterionResult, shared: Mapping[str, Any]) -> CriterionView:
    details: list[tuple[str, Clipped]] = []
    for key, value in verdict.details.items():
        if key in shared or value is None or value == "" or value == {} or value == []:
            continue
        clipped = clip(_detail_text(key, value), DETAIL_LIMIT)
        if clipped is not None and clipped.text:
            details.append((key, clipped))
    return CriterionView(
        name=verdict.criterion,
        label=verdict.label or verdict.criterion,
        status=verdict.status,
        score=verdict.score,
        threshold=verdict.threshold,
        reason=clip(verdict.reason, DETAIL_LIMIT),
        details=details,
        cost_usd=verdict.usage.cost_usd if verdict.usage is not None else 0.0,
        latency_ms=verdict.latency_ms,
    )
