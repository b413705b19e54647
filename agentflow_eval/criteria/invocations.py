"""Pairing a case's expected invocations with the turns a trial recorded.

Turn ``i`` of a trial answers invocation ``i`` of the case. A trial that stopped early
(an agent crash, a timeout, an exhausted step budget) has fewer turns than the case has
invocations; the invocations it never reached pair with ``None``.
"""

from __future__ import annotations

from agentflow_eval.models.evalset import EvalCase, Invocation
from agentflow_eval.models.results import Trial, Turn

__all__ = ["paired_turns"]


def paired_turns(case: EvalCase, trial: Trial) -> list[tuple[Invocation, Turn | None]]:
    """Each expected invocation of ``case`` with the trial's turn for it, or ``None`` when
    the trial ended before reaching it."""
    turns = trial.turns
    return [
        (invocation, turns[index] if index < len(turns) else None)
        for index, invocation in enumerate(case.conversation)
    ]
