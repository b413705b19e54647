"""What a results.json from elsewhere must hold beyond its schema: finite numbers of a
possible size, cases, and counts that add up. A forged or damaged file (a baseline from a
bucket, a run folder copied by hand) is refused in one line naming the file and the
field, before a comparison, a report or a publication trusts it."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from agentflow_eval.files.naming import printable
from agentflow_eval.models import defaults
from agentflow_eval.models.results import CaseResult, RunResult

__all__ = ["LARGEST_NUMBER", "check_numbers", "check_run_counts"]

LARGEST_NUMBER = 2**53
"""No count, token total, cost or time of a run comes near it, and beyond it a JSON number
is no longer exact in most readers (a browser's included)."""

_OUTCOMES = ("passed", "failed", "errored", "not_evaluated")
_RATES = ("pass_rate", "ci_low", "ci_high")


def _numbers(value: Any, where: str) -> Iterator[tuple[str, float | int]]:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, int | float):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numbers(item, f"{where}[{index}]")


def check_numbers(raw: Any) -> str | None:
    """The first problem with a number of the parsed document ``raw`` (not finite, or
    beyond :data:`LARGEST_NUMBER` either way), as ``field: why``; ``None`` when none."""
    for where, number in _numbers(raw, ""):
        if isinstance(number, float) and not math.isfinite(number):
            return f"field {_field(where)}: {number} is not a finite number"
        if abs(number) > LARGEST_NUMBER:
            return f"field {_field(where)}: {number:.3g} is beyond any possible value"
    return None


def check_run_counts(run: RunResult) -> str | None:
    """The first way ``run``'s counts do not hold together, as ``field: why``; ``None``
    when they do: cases present, each case's outcomes adding up to its runs and its runs
    within the runs per case (an adaptive paired run's within the most a run may hold),
    rates within 0..1, and the totals the sums of the cases."""
    if not 1 <= run.runs_per_case <= defaults.MAX_TRIALS:
        return f"field runs_per_case: {run.runs_per_case} is not a possible number of runs"
    if not run.cases:
        return "field cases: no cases (a run's results hold at least one)"
    # an adaptive paired run added pairs to undecided cases after its first round
    adaptive = run.paired_with is not None and run.paired_with.adaptive
    most = defaults.MAX_TRIALS if adaptive else run.runs_per_case
    for index, case in enumerate(run.cases):
        problem = _case_problem(case, most)
        if problem is not None:
            name = printable(case.case_id, keep_newlines=False)
            return f"field cases[{index}] (case '{name}').{problem}"
    totals = run.totals
    sums = {
        "cases": len(run.cases),
        "trials": sum(case.runs for case in run.cases),
        **{key: sum(getattr(case, key) for case in run.cases) for key in _OUTCOMES},
    }
    for key, expected in sums.items():
        found = getattr(totals, key)
        if found != expected:
            return f"field totals.{key}: {found}, but the cases add up to {expected}"
    for key in _RATES:
        if not 0 <= getattr(totals, key) <= 1:
            return f"field totals.{key}: {getattr(totals, key)} is not a rate in 0..1"
    return None


def _case_problem(case: CaseResult, runs_per_case: int) -> str | None:
    for key in ("runs", *_OUTCOMES, "infrastructure_errors"):
        if getattr(case, key) < 0:
            return f"{key}: {getattr(case, key)} is negative"
    if case.runs > runs_per_case:
        return f"runs: {case.runs}, more than the run's {runs_per_case} runs per case"
    outcomes = sum(getattr(case, key) for key in _OUTCOMES)
    if outcomes != case.runs:
        return f"runs: {case.runs}, but passed + failed + errored + not_evaluated is {outcomes}"
    if case.infrastructure_errors > case.errored:
        return f"infrastructure_errors: {case.infrastructure_errors}, more than errored"
    for key in _RATES:
        if not 0 <= getattr(case, key) <= 1:
            return f"{key}: {getattr(case, key)} is not a rate in 0..1"
    return None


def _field(where: str) -> str:
    return printable(where, keep_newlines=False) or "(root)"
