"""What the report needs to know about all trials at once, folded one trial at a time.

The page's head shows facts that span every trial — each criterion's score histogram,
and the settings its verdicts all repeat — before the first case is drawn. The report
stage folds them while it aggregates ``judged.jsonl`` (:class:`TrialDigest` is the
``on_trial`` hook of :func:`~agentflow_eval.run.aggregate.aggregate_judged`), so no trial has to
stay in memory for them. Trials may arrive in any order (``judged.jsonl`` holds them as
they finished): the result is what the trials sorted by (case id, trial index) give.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agentflow_eval.models.results import CriterionResult, TrialResult
from agentflow_eval.report.charts import Histogram, OrderKey, ScoreBins, verdict_keys

__all__ = ["SHARED_MAX_CHARS", "SHARED_MIN", "SharedDetails", "TrialDigest", "json_text"]

SHARED_MIN = 3
"""A criterion needs this many verdicts before its repeated details count as settings."""
SHARED_MAX_CHARS = 120
"""Details longer than this (as JSON) are never shown as a shared setting."""


def json_text(value: Any) -> str:
    """``value`` as the report shows JSON: non-ASCII kept, keys sorted, anything else
    as its ``repr``."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _settings_of(details: dict[str, Any]) -> dict[str, Any]:
    """The details short and non-empty enough to be a shared setting."""
    return {
        key: value
        for key, value in details.items()
        if value not in (None, "", {}, []) and len(json_text(value)) <= SHARED_MAX_CHARS
    }


@dataclass
class _Common:
    first: OrderKey
    values: dict[str, Any]
    seen: int = 1


class SharedDetails:
    """Per criterion, the short details every one of its verdicts in the run repeats
    (settings such as ``match_type`` or ``judge_model``), once it has at least
    :data:`SHARED_MIN` verdicts: shown once beside the criterion, not in every trial.
    Keys keep the order of the criterion's first verdict in the report's order."""

    def __init__(self) -> None:
        self._common: dict[str, _Common] = {}

    def add(self, key: OrderKey, verdict: CriterionResult) -> None:
        common = self._common.get(verdict.criterion)
        details = verdict.details
        if common is None:
            self._common[verdict.criterion] = _Common(key, _settings_of(details))
            return
        common.seen += 1
        if key < common.first:  # this verdict leads: its details set the order
            common.first = key
            common.values = {
                k: v for k, v in details.items() if k in common.values and common.values[k] == v
            }
        else:
            common.values = {
                k: v for k, v in common.values.items() if k in details and details[k] == v
            }

    def result(self) -> dict[str, dict[str, Any]]:
        return {
            name: dict(common.values)
            for name, common in self._common.items()
            if common.values and common.seen >= SHARED_MIN
        }


class TrialDigest:
    """Score histograms and shared details of a run, folded one trial at a time."""

    def __init__(self) -> None:
        self._bins = ScoreBins()
        self._shared = SharedDetails()

    @classmethod
    def of(cls, trials: Iterable[TrialResult]) -> TrialDigest:
        digest = cls()
        for result in trials:
            digest.add(result)
        return digest

    def add(self, result: TrialResult) -> None:
        for key, verdict in verdict_keys(result):
            self._bins.add(key, verdict)
            self._shared.add(key, verdict)

    def histograms(self) -> list[Histogram]:
        return self._bins.histograms()

    def shared_details(self) -> dict[str, dict[str, Any]]:
        return self._shared.result()
