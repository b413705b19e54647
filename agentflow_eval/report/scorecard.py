"""The console scorecard: the run's summary first, then the cases that need a look —
failing (never passed), flaky (passed some trials), not evaluated (nothing judged them) —
then the passing ones, folded past a limit. Under each case that had errored or
unjudged trials, why, grouped by reason. Boring on purpose: the numbers are the point.

::

    agentflow-eval: weather_agent_basic_tests · 5 runs each
    agent: weather_agent · model agentflow-demo/weather
    overall: 8/10  (80%, 95% CI 49%–94%)
             2 cases: 0 failing, 2 flaky, 0 passing
    flaky (passed some trials):
      weather_lookup_simple  4/5  FAILED: trajectory IN_ORDER (1 trial); passed: response ROUGE-1
      ...

:func:`format_failures` is the compact form for a failing test: each case that fell
short with its expected tool calls against its failing trials' actual ones, trials that
fell short the same way on one line (:func:`shortfall_lines`, which ``--verbose`` shows
too). Trials are numbered from 1 wherever a person reads them.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agentflow_eval.compare.brief import comparison_lines
from agentflow_eval.criteria.registry import spec_of
from agentflow_eval.files.case_trials import CaseTrials, TrialsInMemory
from agentflow_eval.files.naming import printable
from agentflow_eval.models.results import (
    CaseResult,
    CriterionResult,
    CriterionSummary,
    ExpectedTurn,
    RecordedToolCall,
    RunResult,
    TrialError,
    TrialResult,
)
from agentflow_eval.report.agreement_text import agreement_lines
from agentflow_eval.report.spend import spend_line

if TYPE_CHECKING:
    from agentflow_eval.compare.models import RunComparison

__all__ = [
    "PASSING_SHOWN",
    "CaseVerdict",
    "actual_calls_text",
    "case_verdict",
    "defaulted_criteria_line",
    "error_text",
    "expected_calls_text",
    "folded_reason",
    "format_failures",
    "format_scorecard",
    "judge_calls_text",
    "judged_on",
    "overall_line",
    "shortfall_lines",
]

PASSING_SHOWN = 10
"""Passing cases listed before the rest are folded into one line (``--full`` lists all)."""

REASON_WIDTH = 160
"""Characters of an error or skip reason on one scorecard line; a longer reason goes on
over the lines after it."""

REASON_LIMIT = 2000
"""Characters of a reason shown in all: a longer one keeps its start and its last
sentence (where a fix is said), with what is between left out."""

CaseVerdict = Literal["failing", "flaky", "not_evaluated", "passing"]

_SECTIONS: tuple[tuple[CaseVerdict, str], ...] = (
    ("failing", "failing (no trial passed)"),
    ("flaky", "flaky (passed some trials, not all)"),
    ("not_evaluated", "not evaluated (nothing judged these trials)"),
    ("passing", "passing (every trial passed)"),
)


def case_verdict(case: CaseResult) -> CaseVerdict:
    """Where a case stands: ``passing`` when every counted trial passed, ``flaky`` when
    some did, ``failing`` when none did though some were judged or errored, and
    ``not_evaluated`` when nothing gave a verdict on the agent (every trial unjudged, or
    errored for the provider's reasons only)."""
    agent_errors = case.errored - case.infrastructure_errors
    if case.passed == 0 and case.failed == 0 and agent_errors == 0:
        return "not_evaluated"
    if case.passed == 0:
        return "failing"
    return "passing" if case.pass_rate >= 1.0 else "flaky"


def _pct(value: float) -> str:
    return f"{value * 100:.0f}%"


def _id(text: str) -> str:
    """An id or label from the files, on one terminal line whatever it holds."""
    return printable(text, keep_newlines=False)


def overall_line(run: RunResult) -> str:
    """``overall: P/T  (R%, 95% CI L%–H%)``: the run's pass rate over the trials it is
    rated on (those the model provider failed are left out unless the run counts them, and
    so are those no criterion gave a verdict on)."""
    totals = run.totals
    rated = totals.rated_trials if totals.rated_trials is not None else totals.trials
    unjudged = min(totals.not_evaluated, totals.trials - rated)
    provider = totals.trials - rated - unjudged
    left_out = [
        f"{provider} trials the model provider failed" if provider else "",
        f"{unjudged} trials without a verdict" if unjudged else "",
    ]
    said = " and ".join(part for part in left_out if part)
    return (
        f"overall: {totals.passed}/{rated}"
        f"  ({_pct(totals.pass_rate)}, 95% CI {_pct(totals.ci_low)}–{_pct(totals.ci_high)})"
        + (f"  + {said}, left out" if said else "")
    )


def format_scorecard(
    run: RunResult,
    *,
    verbose: bool = False,
    simulated_label: str = "",
    trials: CaseTrials | None = None,
    full: bool = False,
    passing_shown: int = PASSING_SHOWN,
    comparison: RunComparison | None = None,
) -> str:
    """The scorecard as text.

    ``trials`` is where each case's trials are read from (default: ``run.trials``; a run
    folder's ``JudgedFileTrials`` reads one case at a time): the reasons of errored and
    unjudged trials come from there, and with ``verbose`` each criterion's mean and why
    every other trial fell short. ``full`` lists every passing case instead of the first
    ``passing_shown``. ``comparison``: the run against its baseline, as a short block at
    the end.
    """
    if trials is None and run.trials:
        trials = TrialsInMemory(run.trials)
    lines = _header(run, simulated_label)
    groups: dict[CaseVerdict, list[CaseResult]] = {verdict: [] for verdict, _ in _SECTIONS}
    for case in run.cases:
        groups[case_verdict(case)].append(case)
    groups["flaky"].sort(key=lambda c: c.pass_rate)  # the shakiest first
    lines.append(overall_line(run))
    lines.append("         " + _counts_line(run, groups))
    if run.totals.trials and run.totals.not_evaluated == run.totals.trials:
        lines.append("NOT EVALUATED: no trial of this run was judged; the pass rate means nothing")
    lines.extend("         " + line for line in filter(None, [spend_line(run)]))
    lines.extend("         " + line for line in judge_noise_lines(run, verbose=verbose))
    lines.extend("         " + line for line in agreement_lines(run))
    width = max((len(_id(c.case_id)) for c in run.cases), default=0)
    for verdict, title in _SECTIONS:
        cases = groups[verdict]
        if not cases:
            continue
        shown = cases
        if verdict == "passing" and not full and len(cases) > passing_shown:
            shown = cases[:passing_shown]
        lines.append(f"{title}:")
        for case in shown:
            counts = f"{case.passed}/{case.rated_runs}"
            needs_trials = verbose or case.errored or case.not_evaluated
            results = (
                trials.trials_of(case.case_id) if trials is not None and needs_trials else None
            )
            said = judged_on(case, results if case.errored else None)
            lines.append(f"  {_id(case.case_id):<{width}}  {counts}  {_id(said)}")
            lines.extend(_case_details(case, results, verbose=verbose))
        folded = len(cases) - len(shown)
        if folded:
            lines.append(f"  … {folded:,} more passing cases (--full lists them)")
    if comparison is not None:
        lines.extend(comparison_lines(comparison))
    # whatever a run recorded (ids, reasons, errors) shows its control characters escaped
    return printable("\n".join(lines))


def _header(run: RunResult, simulated_label: str) -> list[str]:
    lines = [f"agentflow-eval: {run.eval_set_id} · {run.runs_per_case} runs each"]
    model = f" · model {run.agent_model}" if run.agent_model else ""
    lines.append(f"agent: {run.agent}{model}")
    if run.simulated:
        lines.append(simulated_label or "NOTE: simulated offline demo model, not a real LLM")
    defaults = defaulted_criteria_line(run)
    if defaults:
        lines.append(defaults)
    return lines


def _counts_line(run: RunResult, groups: dict[CaseVerdict, list[CaseResult]]) -> str:
    totals = run.totals
    parts = [
        f"{len(run.cases)} case{'' if len(run.cases) == 1 else 's'}: "
        f"{len(groups['failing'])} failing, "
        f"{len(groups['flaky'])} flaky, {len(groups['passing'])} passing"
        + (f", {len(groups['not_evaluated'])} not evaluated" if groups["not_evaluated"] else "")
    ]
    if totals.errored:
        if totals.infrastructure_errors:
            counted = (
                "counted in the rate"
                if run.counts_infrastructure_errors
                else "left out of the rate"
            )
            infra = f" ({totals.infrastructure_errors} by the model provider, {counted})"
        else:
            infra = ""
        parts.append(f"{totals.errored} trials errored{infra}")
    if totals.not_evaluated:
        parts.append(f"{totals.not_evaluated} trials not evaluated")
    if totals.judge_calls or totals.judge_cache_hits:
        parts.append(judge_calls_text(totals.judge_calls, totals.judge_cache_hits))
    return "; ".join(parts)


def judge_noise_lines(run: RunResult, *, verbose: bool = False) -> list[str]:
    """Each LLM judge whose samples split on some trial (with ``verbose``, every judge
    that took several samples): how often its samples disagree and how much of its pass
    rate's variance that noise explains."""
    lines = []
    for criterion in run.criteria:
        sampled = criterion.judge_sampled_trials
        if not sampled or not (criterion.judge_split_trials or verbose):
            continue
        flips = criterion.judge_flip_rate or 0.0
        share = criterion.judge_variance_share
        explained = "" if share is None else f"; noise is {share:.0%} of its pass rate's variance"
        lines.append(
            f"judge {criterion.label or criterion.criterion}: samples split on "
            f"{criterion.judge_split_trials}/{sampled} trials (two samples disagree "
            f"{flips:.0%} of the time){explained}"
        )
    return lines


def judge_calls_text(calls: int, cached: int) -> str:
    """``15 judge calls, 15 more answered from cache``: what was paid for, then what was
    not."""
    paid = f"{calls:,} judge call{'' if calls == 1 else 's'}"
    return paid + (f", {cached:,} more answered from cache" if cached else "")


def judged_on(case: CaseResult, results: Sequence[TrialResult] | None = None) -> str:
    """What a case's line says it was judged on: the criteria that gave it a verdict
    (those only skipped for it left out); where some failed, those first, marked, with
    how many trials each failed. Trials that errored come first, as errored: what their
    criteria made of what they did before they stopped is no pass, so given the case's
    trials (``results``) the verdicts are counted over the trials that finished."""
    errored = f"ERRORED ({_trials_word(case.errored)})" if case.errored else ""
    tallies = _verdict_tallies(case, results)
    judged = [t for t in tallies if t.passed or t.failed or t.not_evaluated]
    if not judged:
        if errored:
            return errored
        skipped = ", ".join(t.name for t in tallies)
        return f"every criterion skipped: {skipped}" if skipped else case.label
    failed = [t for t in judged if t.failed]
    unjudged = [t for t in judged if t.not_evaluated and not t.failed]
    rest = [t for t in judged if not t.failed and not t.not_evaluated]
    if not failed and not unjudged and not errored:
        return ", ".join(t.name for t in rest)
    parts = [errored] if errored else []
    if failed:
        parts.append("FAILED: " + ", ".join(f"{t.name} ({_trials_word(t.failed)})" for t in failed))
    if unjudged:
        parts.append(
            "no verdict: "
            + ", ".join(f"{t.name} ({_trials_word(t.not_evaluated)})" for t in unjudged)
        )
    if rest:
        parts.append("passed: " + ", ".join(t.name for t in rest))
    return "; ".join(parts)


@dataclass(frozen=True)
class _VerdictTally:
    name: str
    passed: int
    failed: int
    not_evaluated: int


def _verdict_tallies(
    case: CaseResult, results: Sequence[TrialResult] | None
) -> list[_VerdictTally]:
    """Each criterion's verdicts on the case: from its summary, or, given its trials,
    over those that finished."""
    if results is None:
        return [
            _VerdictTally(_crit_name(c), c.passed, c.failed, c.not_evaluated) for c in case.criteria
        ]
    counts: dict[tuple[str, str], Counter[str]] = {
        (c.criterion, c.label): Counter() for c in case.criteria
    }
    for result in results:
        if result.trial.error is not None:
            continue
        for verdict in result.criteria:
            counts.setdefault((verdict.criterion, verdict.label), Counter())[verdict.status] += 1
    return [
        _VerdictTally(label or criterion, c["passed"], c["failed"], c["not_evaluated"])
        for (criterion, label), c in counts.items()
    ]


def _crit_name(summary: CriterionSummary) -> str:
    return summary.label or summary.criterion


def _trials_word(count: int) -> str:
    return f"{count} trial{'' if count == 1 else 's'}"


def _case_details(
    case: CaseResult, results: Sequence[TrialResult] | None, *, verbose: bool
) -> list[str]:
    """Under a case: why trials errored or went unjudged (always), criterion means and
    every failing trial's reasons (``verbose``); ``results``: the case's trials, read
    where any of that needs them."""
    out: list[str] = []
    if verbose:
        for crit in case.criteria:
            mean = "n/a" if crit.mean_score is None else f"{crit.mean_score:.2f}"
            extra = f", {crit.not_evaluated} not evaluated" if crit.not_evaluated else ""
            skipped = f", {crit.skipped} skipped" if crit.skipped else ""
            out.append(
                f"      {crit.label or crit.criterion}: mean {mean}, "
                f"{crit.passed} passed, {crit.failed} failed{extra}{skipped}"
            )
    if results is None:
        return out
    out.extend(_grouped_reasons(results))
    if verbose:
        failed = [r for r in results if r.status == "failed"]
        out.extend(shortfall_lines(case, failed, indent="      "))
        out.extend(_printed_lines(results))
    return out


def _printed_lines(results: Iterable[TrialResult]) -> list[str]:
    """``trial 2 printed (stdout): ...``: the start of what each trial's agent printed
    (the whole, up to its limit, is in the trial's record and report.html)."""
    lines = []
    for result in results:
        output = result.trial.agent_output
        if output is None:
            continue
        for stream, text in (("stdout", output.stdout), ("stderr", output.stderr)):
            if text:
                lines.append(
                    f"      trial {result.trial.number} printed ({stream}): {_short(text)}"
                )
    return lines


def _grouped_reasons(results: Iterable[TrialResult]) -> list[str]:
    """``errored ×3 (trials 1, 3, 5): timeout: ...``: errored and unjudged trials, one
    line per distinct reason, in the order first met."""
    groups: dict[tuple[str, str], list[int]] = {}
    for result in results:
        if result.status == "errored" and result.trial.error is not None:
            key = ("errored", error_text(result.trial.error))
        elif result.status == "not_evaluated":
            key = ("not evaluated", _why_not_evaluated(result.criteria))
        else:
            continue
        groups.setdefault(key, []).append(result.trial.number)
    lines: list[str] = []
    for (status, reason), indices in groups.items():
        lines.extend(
            folded_reason(f"      {status} ×{len(indices)} ({_trial_list(indices)}): ", reason)
        )
    return lines


def error_text(error: TrialError) -> str:
    """``timeout: no answer within 30 s``; ``exception: ConnectionError: service down``
    (the exception's type, where the kind does not say it already)."""
    if error.kind in ("timeout", "max_steps") or not error.type or error.type in error.message:
        return f"{error.kind}: {error.message}"
    return f"{error.kind}: {error.type}: {error.message}"


def _why_not_evaluated(criteria: Sequence[CriterionResult]) -> str:
    unjudged = [c for c in criteria if c.status == "not_evaluated"]
    if unjudged:
        return "; ".join(f"{c.label or c.criterion}: {c.reason or 'no verdict'}" for c in unjudged)
    if not criteria:
        return "no criterion applies to this case"
    return "every criterion was skipped — " + "; ".join(
        f"{c.criterion}: {c.reason or 'skipped'}" for c in criteria
    )


def _why_failed(result: TrialResult) -> str:
    """``trajectory EXACT 0.50 (invocation 1: 1/2 expected call(s) matched ...)``: each
    criterion that failed or gave no verdict, with its score and reason."""
    parts = []
    for c in result.criteria:
        if c.status not in ("failed", "not_evaluated"):
            continue
        name = c.label or c.criterion
        if c.score is None:
            parts.append(f"{name} not evaluated ({c.reason})")
        else:
            parts.append(f"{name} {c.score:.2f}" + (f" ({c.reason})" if c.reason else ""))
    return "; ".join(parts)


def _trial_list(numbers: list[int]) -> str:
    """``trials 1, 3, 4``: trials by their numbers as people see them (from 1)."""
    shown = ", ".join(str(n) for n in numbers[:8])
    more = f", … {len(numbers) - 8} more" if len(numbers) > 8 else ""
    return f"trial{'s' if len(numbers) > 1 else ''} {shown}{more}"


def folded_reason(prefix: str, reason: str) -> list[str]:
    """``prefix`` and ``reason`` on one line, or a long reason folded over lines of
    :data:`REASON_WIDTH` characters, each after the first indented under the prefix: a
    reason's end is where it says what to do, so it is never cut off. A reason past
    :data:`REASON_LIMIT` keeps its start and its last sentence."""
    parts = textwrap.wrap(
        _within_limit(" ".join(reason.split())),
        REASON_WIDTH,
        break_on_hyphens=False,
    ) or [""]
    indent = " " * (len(prefix) - len(prefix.lstrip()) + 4)
    return [prefix + parts[0], *(indent + part for part in parts[1:])]


def _within_limit(text: str) -> str:
    if len(text) <= REASON_LIMIT:
        return text
    half = REASON_LIMIT // 2
    sentences = _SENTENCE_END.split(text)
    last = sentences[-1] if sentences[-1] else text
    tail = last if len(last) <= half else (last[-half:].partition(" ")[2] or last[-half:])
    cut = text[: REASON_LIMIT - len(tail)]
    head = cut.rpartition(" ")[0] or cut
    return f"{head} … {tail}"


_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


def _short(text: str, width: int = REASON_WIDTH) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


# ---------------------------------------------------------------- failures, compactly


def _call_text(name: str, args: dict[str, Any]) -> str:
    shown = ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in args.items()
    )
    return _short(f"{name}({shown})", 80)


def _calls_text(calls: Sequence[RecordedToolCall]) -> str:
    return " → ".join(_call_text(call.name, call.args) for call in calls) or "(no tool calls)"


def expected_calls_text(expected: Sequence[ExpectedTurn]) -> str:
    """A case's expected tool calls, ``a(x=1) → b(y="z")``, turns split by ``|``."""
    return " | ".join(_calls_text(turn.tool_calls) for turn in expected)


def actual_calls_text(result: TrialResult) -> str:
    """A trial's tool calls as :func:`expected_calls_text` writes them."""
    return " | ".join(_calls_text(turn.tool_calls) for turn in result.trial.turns) or "(no turn)"


def format_failures(
    run: RunResult,
    trials: CaseTrials | None = None,
    *,
    max_cases: int = 20,
    max_trials: int = 3,
) -> str:
    """Each case short of a full pass, compactly: its expected tool calls (turns split by
    ``|``), then its trials that fell short, those that fell short the same way on one
    line (up to ``max_trials`` such lines): why, the actual calls, and the answer against
    the reference where the answer was what failed. The scorecard's ``--verbose`` shows
    failing trials with the same lines."""
    if trials is None:
        trials = TrialsInMemory(run.trials)
    short = [c for c in run.cases if case_verdict(c) != "passing"]
    short.sort(key=lambda c: c.pass_rate)
    lines: list[str] = []
    for case in short[:max_cases]:
        results = trials.trials_of(case.case_id)
        said = judged_on(case, results if case.errored else None)
        lines.append(f"{_id(case.case_id)}: {case.passed}/{case.rated_runs} passed  [{_id(said)}]")
        bad = [r for r in results if not r.passed]
        lines.extend(shortfall_lines(case, bad, indent="  ", max_groups=max_trials))
    if len(short) > max_cases:
        lines.append(f"… {len(short) - max_cases} more cases fell short")
    return "\n".join(lines)


def shortfall_lines(
    case: CaseResult,
    results: Sequence[TrialResult],
    *,
    indent: str,
    max_groups: int | None = None,
) -> list[str]:
    """Trials of ``case`` that fell short, those that fell short the same way (same
    reason, same calls, same answer) grouped under one line::

        expected   get_weather(location="Tokyo") → get_weather(location="London")
        trials 2, 4: failed: trajectory IN_ORDER 0.50 (...)
          actual     get_weather(location="Tokyo") → get_weather(location="London, UK")
          answer     "..."
          reference  "..."

    The expected line only where the case expects tool calls; the answer against the
    reference only where a criterion on the answer failed."""
    if not results:
        return []
    lines: list[str] = []
    expects_calls = any(turn.tool_calls for turn in case.expected)
    if expects_calls:
        lines.append(f"{indent}expected   {expected_calls_text(case.expected)}")
    reference = case.expected[-1].final_response if case.expected else None
    groups: dict[tuple[str, str, str | None], list[int]] = {}
    for result in results:
        actual = actual_calls_text(result)
        shows_calls = expects_calls or bool(result.trial.tool_calls)
        answer = result.trial.final_response
        on_answer = result.status == "failed" and _answer_failed(result)
        key = (
            _why_short(result),
            actual if shows_calls else "",
            (answer or "") if reference and answer != reference and on_answer else None,
        )
        groups.setdefault(key, []).append(result.trial.number)
    shown = list(groups.items())
    if max_groups is not None:
        shown = shown[:max_groups]
    for (why, actual, answer), numbers in shown:
        lines.extend(folded_reason(f"{indent}{_trial_list(numbers)}: ", why))
        if actual:
            lines.append(f"{indent}  actual     {actual}")
        if answer is not None and reference:
            lines.append(
                f"{indent}  answer     {_short(json.dumps(answer, ensure_ascii=False), 120)}"
            )
            lines.append(
                f"{indent}  reference  {_short(json.dumps(reference, ensure_ascii=False), 120)}"
            )
    left = sum(len(numbers) for _, numbers in list(groups.items())[len(shown) :])
    if left:
        lines.append(f"{indent}… {left} more trials fell short in other ways")
    return lines


def _why_short(result: TrialResult) -> str:
    if result.trial.error is not None:
        return f"errored: {error_text(result.trial.error)}"
    if result.status == "not_evaluated":
        return f"not evaluated: {_why_not_evaluated(result.criteria)}"
    return f"failed: {_why_failed(result)}"


def _answer_failed(result: TrialResult) -> bool:
    """Whether a criterion that judges something other than the tool calls (as the
    criteria declare; a criterion of one's own counts) failed."""
    return any(c.status == "failed" and not _on_tool_calls(c.criterion) for c in result.criteria)


def _on_tool_calls(name: str) -> bool:
    spec = spec_of(name)
    return spec is not None and spec.subject == "tool_calls"


def defaulted_criteria_line(run: RunResult) -> str | None:
    """Which criteria judged the run because no config was given (ADK's defaults), and on
    how many cases (a case with expectations of its own gets a default only where it gives
    the reference); ``None`` when every criterion was asked for."""
    criteria = run.config.get("criteria") or {}
    names = [
        name
        for name, options in criteria.items()
        if isinstance(options, dict) and options.get("defaulted")
    ]
    if not names:
        return None
    total = len(run.cases)
    applied = [
        f"{name} on {sum(any(c.criterion == name for c in case.criteria) for case in run.cases)}"
        f"/{total} cases"
        for name in names
    ]
    return "default criteria (no config given): " + ", ".join(applied)
