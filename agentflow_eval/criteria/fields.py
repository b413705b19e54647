"""The expectations a case can give for criteria to judge, by the field that holds them,
and whether a case gives one: what a criterion declares it judges
(:class:`~agentflow_eval.criteria.registry.CriterionSpec.judges`)."""

from __future__ import annotations

from typing import Literal, get_args

from agentflow_eval.models.evalset import EvalCase

__all__ = ["EXPECTATION_FIELDS", "ExpectationField", "gives"]

ExpectationField = Literal[
    "expected_tool_trajectory",
    "expected_nodes",
    "expected_final_response",
    "expected_intermediate_responses",
    "final_session_state",
    "end_state",
    "rubrics",
    "tool_mocks",
]
"""A field of an eval case (or of its turns) that holds what a criterion compares with
(``tool_mocks``: mocks that inject an instruction, which ``injection_resisted`` judges)."""

EXPECTATION_FIELDS: tuple[ExpectationField, ...] = get_args(ExpectationField)


def gives(case: EvalCase, field: ExpectationField, *, as_reference: bool = False) -> bool:
    """Whether ``case`` gives ``field`` with something in it. ``as_reference``: whether it
    gives what a criterion compares against, where an expected tool trajectory written out
    empty (ADK's ``tool_uses: []``) says "no tool calls", and counts."""
    turns = case.conversation
    if field == "expected_tool_trajectory":
        return any(
            inv.expected_tool_trajectory
            or (as_reference and "expected_tool_trajectory" in inv.model_fields_set)
            for inv in turns
        )
    if field == "expected_nodes":
        return any(
            inv.expected_nodes or (as_reference and "expected_nodes" in inv.model_fields_set)
            for inv in turns
        )
    if field == "expected_final_response":
        return any(
            inv.expected_final_response is not None and inv.expected_final_response.text
            for inv in turns
        )
    if field == "expected_intermediate_responses":
        return any(m.text for inv in turns for m in inv.expected_intermediate_responses)
    if field == "final_session_state":
        return bool(case.final_session_state)
    if field == "end_state":
        return bool(case.end_state)
    if field == "tool_mocks":
        mocks = [*case.tool_mocks, *(m for inv in turns for m in inv.tool_mocks)]
        return any(mock.inject is not None for mock in mocks)
    return bool(case.rubrics) or any(inv.rubrics for inv in turns)
