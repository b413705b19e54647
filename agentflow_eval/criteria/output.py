"""``output_matches``: the output is the expected one, compared exactly (JSON-equal), by
containment, or as a JSON subset (:mod:`agentflow_eval.models.matching`).

A component case states it itself (its ``expected_output`` and ``output_match``) and the
criterion reads what the component returned (``Turn.output``); for an agent it reads the
last answer's text. Scored 1.0 or 0.0, threshold 1.0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentflow_eval.criteria.base import CriterionContext, scored, skipped, threshold_of
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalCase, OutputMatches
from agentflow_eval.models.matching import OutputMatch, matches
from agentflow_eval.models.results import CriterionResult, Trial

__all__ = ["OutputMatchesCriterion", "OutputMatchesOptions"]

_SHOWN = 200
"""Characters of a value shown in a verdict's reason."""


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _output(case: EvalCase, trial: Trial) -> Any:
    """What the trial produced: a component's output as it returned it, an agent's last
    answer as text."""
    turn = trial.turns[-1] if trial.turns else None
    if turn is None:
        return None
    return turn.output if case.component is not None else turn.final_response


def _reference(case: EvalCase) -> tuple[bool, Any]:
    """What the case expects when the criterion gives nothing: a component case's
    ``expected_output``, else the last reference answer's text."""
    if case.component is not None:
        return True, case.expected_output
    answers = [inv.expected_final_response for inv in case.conversation]
    last = answers[-1] if answers else None
    return (True, last.text) if last is not None and last.text else (False, None)


@dataclass
class OutputMatchesCriterion:
    """The output matches ``expected`` as ``match`` says (``expected`` unset: the case's
    own, see :func:`_reference`)."""

    name: str
    expected: Any = None
    expected_given: bool = True
    match: OutputMatch = "exact"
    threshold: float = 1.0
    label: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.label = OutputMatches(expected=self.expected, match=self.match).label

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        has_expected, expected = (True, self.expected) if self.expected_given else (False, None)
        if not has_expected:
            has_expected, expected = _reference(ctx.case)
        if not has_expected:
            return skipped(self, "the case gives no expected output or reference answer")
        trial = ctx.trial
        got = _output(ctx.case, trial)
        details = {"expected": expected, "got": got, "match": self.match}
        if trial.error is not None:
            reason = f"the trial did not finish ({trial.error.kind}: {trial.error.message})"
            return scored(self, 0.0, details, reason=reason)
        ok = matches(self.match, expected, got)
        why = None if ok else f"expected {_shown(expected)} ({self.match}), got {_shown(got)}"
        return scored(self, 1.0 if ok else 0.0, details, reason=why)


class OutputMatchesOptions(CriterionOptions):
    """Options of output_matches."""

    expected: Any = None
    """The expected output (default: a component case's ``expected_output``, else the
    last turn's reference answer)."""
    match: OutputMatch = "exact"
    """``exact`` (JSON-equal), ``contains`` (a substring of a text, an element of a list)
    or ``json_subset`` (every key of the expected object, recursively)."""


@criterion("output_matches", OutputMatchesOptions)
def build_output_matches(
    name: str, options: OutputMatchesOptions, config: EvalConfig
) -> OutputMatchesCriterion:
    """The output (a component's return value, an agent's last answer) matches the
    expected one: exactly, by containment or as a JSON subset (default threshold 1.0)."""
    return OutputMatchesCriterion(
        name=name,
        expected=options.expected,
        expected_given="expected" in options.model_fields_set,
        match=options.match,
        threshold=threshold_of(options, 1.0),
    )
