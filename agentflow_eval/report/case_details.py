"""A case's details as data the page's script draws when the case is opened.

A report of 10,000 trials drawn as markup is millions of DOM nodes that a browser must
build before it shows anything. The page instead carries, per case, what opening it
shows: a line of facts and the trials' views (:class:`~agentflow_eval.report.view.TrialView`,
everything already decided: which call answers which, which arguments differ, how texts
are clipped, every number formatted) as compact JSON, compressed with zlib and
base64-encoded (:func:`pack_case`). The page's script decodes a case's block when it is
opened (the browser's ``DecompressionStream("deflate")``) and builds the DOM with text
nodes only: what an agent wrote is data, never markup.

The block is base64 text in an attribute, so nothing in it can end the attribute or the
element, whatever a run recorded; each case's block is built and written as the page
reaches that case, so the report stage still holds one case's trials at a time.

The shape, documented here for the script (``report.js``) that reads it; keys whose
value would be None, false or [] are left out::

    case     {facts: [str], trials: [trial]}
    trial    {index, number, status, why?, meta, error?, turns, verdicts, verdicts_note?,
              judge_cost?, printed?}
             (index counts from 0 as results.json does; number, from 1, is the label)
    error    {kind, type?, message: text, traceback?: text}
    printed  [[stream, text]]   (what the agent printed: stream is "stdout" or "stderr")
    turn     {number, id?, trajectory?, stats?, user?: text, unreached?, note?,
              rows: [row], unknown?: str, intermediate?: [text], answer?: text,
              reference?: text, timeline?: [event]}
    event    [at: str, kind, who: str | null, text]   (kind: step, handoff, model, tool,
              says, answer)
    row      {status, expected?: call, actual?: call}
    call     {name, args: [[name, text, differs?]], result?: text, error?, ms?}
    verdict  {label, status, score, threshold?, reason?: text, details?: [[key, text]],
              cost?}
    text     "a string" | ["a clipped string", characters left out]

(``unknown`` is the sentence shown for a turn whose expected calls nobody knows.)
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

from agentflow_eval.models.results import CaseResult
from agentflow_eval.report.formats import (
    format_cost,
    format_count,
    format_duration_ms,
    format_pct,
    format_score,
)
from agentflow_eval.report.spend import cost_text
from agentflow_eval.report.view import (
    CallView,
    CaseView,
    Clipped,
    CriterionView,
    InvocationView,
    RowView,
    TrialView,
)

__all__ = [
    "UNFINISHED_VERDICTS",
    "WHY_LIMIT",
    "case_data",
    "case_facts",
    "pack_case",
    "trial_data",
    "unpack_case",
]

WHY_LIMIT = 140
"""Characters of an error message shown on a trial's one-line summary."""

UNFINISHED_VERDICTS = (
    "The trial did not finish: these verdicts judge only what the agent did before it "
    "stopped, and the trial counts as errored whatever they say."
)
"""Shown over the verdicts of a trial that errored, so a criterion it passed does not
read as the trial passing."""

_LEVEL = 9


def _text(clipped: Clipped | None) -> str | list[Any] | None:
    if clipped is None:
        return None
    return [clipped.text, clipped.omitted] if clipped.omitted else clipped.text


def _dropping_empty(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` without its None, False and [] values (an empty text stays: an empty
    answer is not a missing one)."""
    return {k: v for k, v in record.items() if v is not None and v is not False and v != []}


def _call(call: CallView | None) -> dict[str, Any] | None:
    if call is None:
        return None
    return _dropping_empty(
        {
            "name": call.name,
            "args": [
                [arg.name, _text(arg.value), True] if arg.differs else [arg.name, _text(arg.value)]
                for arg in call.args
            ],
            "result": _text(call.result),
            "error": call.error,
            "ms": format_duration_ms(call.duration_ms) if call.duration_ms else None,
        }
    )


def _row(row: RowView) -> dict[str, Any]:
    return _dropping_empty(
        {"status": row.status, "expected": _call(row.expected), "actual": _call(row.actual)}
    )


NEXT_STEP_ONLY = "judged: the next step only"
"""The fact shown for a case whose criteria judged each trial's next step alone (the
trials shown are whole)."""

UNKNOWN_EXPECTATION = "No expected tool calls known for this turn"
UNKNOWN_HINT = " (render with the eval set, or record expectations in the results, to compare)"


def _turn(turn: InvocationView) -> dict[str, Any]:
    stats = None
    if turn.latency_ms is not None:
        stats = f"{format_duration_ms(turn.latency_ms)} · {format_count(turn.tokens)} tokens"
        if turn.cost != "–":
            stats += f" · {turn.cost}"
    return _dropping_empty(
        {
            "number": turn.number,
            "id": turn.invocation_id,
            "trajectory": None
            if turn.trajectory_score is None
            else format_score(turn.trajectory_score),
            "stats": stats,
            "user": _text(turn.user_text),
            "unreached": not turn.reached,
            "note": turn.note,
            "rows": [_row(row) for row in turn.rows],
            "unknown": None if turn.expectation_known else UNKNOWN_EXPECTATION + UNKNOWN_HINT + ".",
            "intermediate": [_text(text) for text in turn.intermediate],
            "answer": _text(turn.answer),
            "reference": _text(turn.reference),
            "timeline": [
                [format_duration_ms(entry.at_ms), entry.kind, entry.who, _text(entry.text)]
                for entry in turn.timeline
            ],
        }
    )


def _verdict(verdict: CriterionView) -> dict[str, Any]:
    cost = " · ".join(
        part
        for part in (
            format_duration_ms(verdict.latency_ms) if verdict.latency_ms else "",
            format_cost(verdict.cost_usd) if verdict.cost_usd else "",
        )
        if part
    )
    return _dropping_empty(
        {
            "label": verdict.label,
            "status": verdict.status,
            "score": format_score(verdict.score),
            "threshold": None if verdict.threshold is None else format_score(verdict.threshold),
            "reason": _text(verdict.reason),
            "details": [[key, _text(value)] for key, value in verdict.details],
            "cost": cost or None,
        }
    )


def _why(trial: TrialView) -> str:
    if trial.error is not None:
        return f"{trial.error.kind}: {trial.error.message.text[:WHY_LIMIT]}"
    return " · ".join(trial.problems)


def trial_data(trial: TrialView) -> dict[str, Any]:
    """One trial as the page's script reads it (see the module's documentation). Without
    the eval set, a turn with no known expectation says how to get one."""
    error = None
    if trial.error is not None:
        error = _dropping_empty(
            {
                "kind": trial.error.kind,
                "type": trial.error.type,
                "message": _text(trial.error.message),
                "traceback": _text(trial.error.traceback),
            }
        )
    meta = (
        f"{format_duration_ms(trial.duration_ms)} · {format_count(trial.tokens)} tok · "
        f"{'cost ' if trial.cost.startswith('unknown') else ''}{trial.cost}"
    )
    record = _dropping_empty(
        {
            "status": trial.status,
            "why": _why(trial) or None,
            "meta": meta,
            "error": error,
            "turns": [_turn(turn) for turn in trial.invocations],
            "verdicts": [_verdict(v) for v in trial.criteria],
            "verdicts_note": UNFINISHED_VERDICTS
            if trial.error is not None and trial.criteria
            else None,
            "judge_cost": format_cost(trial.judge_cost_usd) if trial.judge_cost_usd else None,
            "printed": [[stream, _text(text)] for stream, text in trial.printed],
        }
    )
    return {"index": trial.index, "number": trial.index + 1, **record}


def case_facts(case: CaseResult) -> list[str]:
    """The line of facts over a case's trials: counts, pass@k and pass^k, what it cost."""
    counts = f"{case.passed} passed · {case.failed} failed · {case.errored} errored"
    if case.not_evaluated:
        counts += f" · {case.not_evaluated} not evaluated"
    facts = [counts]
    facts += [f"pass@{k} {format_pct(v)}" for k, v in case.pass_at_k.items()]
    facts += [f"pass^{k} {format_pct(v)}" for k, v in case.pass_hat_k.items() if k != "1"]
    facts += [
        f"tokens {format_count(case.usage.total_tokens)}",
        f"cost {cost_text(case.usage)}",
    ]
    if case.judge_usage.calls:
        facts.append(f"judge {cost_text(case.judge_usage)}")
    if case.next_step_only:
        facts.append(NEXT_STEP_ONLY)
    return facts


def case_data(case: CaseView) -> dict[str, Any]:
    """What opening ``case`` shows, as the page's script reads it."""
    return {
        "facts": case_facts(case.result),
        "trials": [trial_data(t) for t in case.trials],
    }


def pack_case(case: CaseView) -> str:
    """A case's block as the page carries it: JSON, zlib-compressed, base64."""
    document = json.dumps(case_data(case), ensure_ascii=False, separators=(",", ":"))
    return base64.b64encode(zlib.compress(document.encode("utf-8"), _LEVEL)).decode("ascii")


def unpack_case(block: str) -> dict[str, Any]:
    """A case's block read back, as :func:`pack_case` wrote it (for tools and tests that
    read a report without a browser)."""
    document: dict[str, Any] = json.loads(zlib.decompress(base64.b64decode(block)))
    return document
