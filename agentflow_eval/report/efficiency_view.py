"""The comparison section's efficiency part, reshaped for the page: each measure overall
(geometric mean ratio and interval), the cases whose cost, tokens, latency or tool calls
changed significantly, and where the trajectories of the cases that got worse part ways.
The wording is the terminal's (:mod:`agentflow_eval.compare.render`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentflow_eval.compare.efficiency import WORSE
from agentflow_eval.compare.models import Comparison
from agentflow_eval.compare.render import (
    EFFICIENCY_TEST,
    efficiency_changes,
    efficiency_test,
    format_divergence,
    format_efficiency_overall,
    format_measure_change,
    worse_verdicts,
)

__all__ = ["DivergenceRow", "EfficiencyLine", "EfficiencyView", "efficiency_view"]


@dataclass(frozen=True)
class EfficiencyLine:
    """One line: a measure overall, or one case's measure (``case_id`` set). ``css`` is
    ``regression`` for a change beyond its tolerance, ``worse``/``better`` for another
    significant one, else empty."""

    text: str
    css: str = ""
    case_id: str = ""


@dataclass(frozen=True)
class DivergenceRow:
    """A case that got worse (``why``: its verdicts) and where its paths part."""

    case_id: str
    why: str
    lines: list[str]


@dataclass(frozen=True)
class EfficiencyView:
    test: str = EFFICIENCY_TEST
    overall: list[EfficiencyLine] = field(default_factory=list)
    changed: list[EfficiencyLine] = field(default_factory=list)
    divergences: list[DivergenceRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _css(verdict: str, beyond_tolerance: bool) -> str:
    if beyond_tolerance:
        return "regression"
    if verdict == "no significant change":
        return ""
    return "worse" if verdict in WORSE else "better"


def efficiency_view(comparison: Comparison) -> EfficiencyView | None:
    """The efficiency part of ``comparison`` (None when it has none)."""
    efficiency = comparison.efficiency
    if efficiency is None:
        return None
    changed = [
        EfficiencyLine(
            format_measure_change(change),
            _css(change.verdict, change.beyond_tolerance),
            case.case_id,
        )
        for case in comparison.cases
        for change in efficiency_changes(case)
    ]
    divergences = []
    for case in comparison.cases:
        if not case.divergence:
            continue
        divergences.append(
            DivergenceRow(
                case.case_id,
                ", ".join(worse_verdicts(case)),
                [format_divergence(d) for d in case.divergence],
            )
        )
    return EfficiencyView(
        test=efficiency_test(efficiency),
        overall=[
            EfficiencyLine(
                format_efficiency_overall(change), _css(change.verdict, change.beyond_tolerance)
            )
            for change in efficiency.overall
        ],
        changed=changed,
        divergences=divergences,
        notes=list(efficiency.notes),
    )
