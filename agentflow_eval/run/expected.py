"""What a case expected, in the shape results and reports carry it.

:func:`expected_turns` copies a case's expected tool calls and reference answers into
:class:`~agentflow_eval.models.results.ExpectedTurn` records, so ``results.json`` holds them and a
report re-rendered from that file alone still shows expected against actual.
"""

from __future__ import annotations

from agentflow_eval.models.evalset import EvalCase, EvalSet
from agentflow_eval.models.results import ExpectedTurn, RecordedToolCall, RunResult

__all__ = ["expected_turns", "with_expectations"]


def expected_turns(case: EvalCase) -> list[ExpectedTurn]:
    """One record per invocation of ``case``: its user text, expected tool calls and
    expected final answer (empty for a ``conversation_scenario`` case)."""
    turns: list[ExpectedTurn] = []
    for invocation in case.conversation:
        reference = invocation.expected_final_response
        turns.append(
            ExpectedTurn(
                invocation_id=invocation.invocation_id,
                user_text=invocation.user_content.text,
                tool_calls=[
                    RecordedToolCall(name=call.name, args=dict(call.args), id=call.id)
                    for call in invocation.expected_tool_trajectory
                ],
                final_response=reference.text if reference is not None else None,
            )
        )
    return turns


def with_expectations(run: RunResult, eval_set: EvalSet) -> RunResult:
    """``run`` with the expected turns of ``eval_set``'s cases recorded in each case that
    has none (results written before they were recorded), so a report made from the
    results alone compares expected with actual."""
    cases = {case.eval_id: case for case in eval_set.eval_cases}
    filled = [
        case.model_copy(update={"expected": expected_turns(cases[case.case_id])})
        if not case.expected and case.case_id in cases
        else case
        for case in run.cases
    ]
    return run.model_copy(update={"cases": filled})
