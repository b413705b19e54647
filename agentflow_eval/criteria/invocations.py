"""Pairing a case's expected invocations with the turns a trial recorded, and the text
of a turn as the response criteria compare it.

Turn ``i`` of a trial answers invocation ``i`` of the case. A trial that stopped early
(an agent crash, a timeout, an exhausted step budget) has fewer turns than the case has
invocations; the invocations it never reached pair with ``None``.

With ``include_intermediate_responses_in_final`` (Google ADK's option of that name), a
turn's text is its intermediate responses followed by its final response, one per line,
on the agent's side and on the expected side alike: what an agent says before and
between its tool calls is judged with its answer.
"""

from __future__ import annotations

from agentflow_eval.models.evalset import EvalCase, Invocation
from agentflow_eval.models.results import Trial, Turn

__all__ = ["actual_text", "expected_text", "paired_turns"]


def paired_turns(case: EvalCase, trial: Trial) -> list[tuple[Invocation, Turn | None]]:
    """Each expected invocation of ``case`` with the trial's turn for it, or ``None`` when
    the trial ended before reaching it."""
    turns = trial.turns
    return [
        (invocation, turns[index] if index < len(turns) else None)
        for index, invocation in enumerate(case.conversation)
    ]


def _joined(texts: list[str]) -> str | None:
    present = [text for text in texts if text]
    return "\n".join(present) if present else None


def expected_text(invocation: Invocation, *, include_intermediate: bool = False) -> str | None:
    """The expected final response's text (``None`` without one); with
    ``include_intermediate``, the expected intermediate responses' texts before it, and
    ``None`` when there is no text at all."""
    final = invocation.expected_final_response
    if not include_intermediate:
        return final.text if final is not None else None
    texts = [message.text for message in invocation.expected_intermediate_responses]
    return _joined([*texts, final.text if final is not None else ""])


def actual_text(turn: Turn | None, *, include_intermediate: bool = False) -> str | None:
    """The turn's final response (``None`` when the turn is missing or gave none); with
    ``include_intermediate``, its intermediate responses before it."""
    if turn is None:
        return None
    if not include_intermediate:
        return turn.final_response
    return _joined([*turn.intermediate_responses, turn.final_response or ""])
