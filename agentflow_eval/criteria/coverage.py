"""What the config's criteria leave unjudged: an expectation a case gives (an expected
tool trajectory, a final session state, rubrics...) that no criterion of the run reads,
said before the run starts rather than passed over in silence."""

from __future__ import annotations

from agentflow_eval.criteria.fields import EXPECTATION_FIELDS, ExpectationField, gives
from agentflow_eval.criteria.registry import (
    default_applies,
    deterministic_first,
    judged_fields,
    specs,
)
from agentflow_eval.files.authoring import EXPECTATIONS, Expectation
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalCase, EvalSet

__all__ = [
    "EXPECTATION_FIELD",
    "judge_hint",
    "judged_expectations",
    "unjudged_fields",
    "unjudged_warnings",
]

_LISTED_CASES = 5

EXPECTATION_FIELD: dict[Expectation, ExpectationField] = {
    "tools": "expected_tool_trajectory",
    "nodes": "expected_nodes",
    "answer": "expected_final_response",
    "state": "final_session_state",
}
"""The field each expectation of ``eval-set add --expect`` is written to."""


def judge_hint(field_name: ExpectationField) -> str:
    """What would judge ``field_name``, from what the criteria declare they judge."""
    declared = specs()
    hint = "add " + " or ".join(deterministic_first(s for s in declared if field_name in s.judges))
    if field_name == "expected_intermediate_responses":
        readers = deterministic_first(s for s in declared if s.intermediate_in_final)
        if readers:
            return f"{hint}, or include_intermediate_responses_in_final on {' or '.join(readers)}"
    return f"{hint} to the config's criteria"


def unjudged_fields(case: EvalCase, config: EvalConfig) -> list[ExpectationField]:
    """The expectations ``case`` gives that no criterion of ``config`` judges for it, in
    :data:`EXPECTATION_FIELDS` order. None when the config has a custom criterion (it may
    read any field), or for a component case (its reference answer stands for its
    expected output: ``output_matches``)."""
    if case.component is not None or any(o.function for o in config.criteria.values()):
        return []
    judged: set[ExpectationField] = set()
    for name, options in config.criteria.items():
        if not options.defaulted or default_applies(name, case):
            judged |= judged_fields(name, options)
    for spec in specs():  # what a criterion judges unasked is judged whatever the config
        if spec.judges_unasked:
            judged |= set(spec.judges)
    return [f for f in EXPECTATION_FIELDS if f not in judged and gives(case, f)]


def unjudged_warnings(eval_set: EvalSet, config: EvalConfig) -> list[str]:
    """One warning per expectation that some case gives and no criterion of ``config``
    judges for that case (say, a ``final_session_state`` without
    ``final_session_state_match``), naming the field, the cases and what would judge it.
    What a run warns of before it starts, and ``eval-set validate`` reports."""
    unjudged: dict[ExpectationField, list[str]] = {}
    for case in eval_set.eval_cases:
        for field_name in unjudged_fields(case, config):
            unjudged.setdefault(field_name, []).append(case.eval_id)
    warnings = []
    for field_name, case_ids in unjudged.items():
        listed = ", ".join(repr(c) for c in case_ids[:_LISTED_CASES])
        more = f" and {len(case_ids) - _LISTED_CASES} more" if len(case_ids) > _LISTED_CASES else ""
        warnings.append(
            f"{field_name} is given by {len(case_ids)} case(s) but no criterion judges it "
            f"({judge_hint(field_name)}): {listed}{more}"
        )
    return warnings


def judged_expectations(
    case: EvalCase, config: EvalConfig
) -> tuple[list[Expectation], list[Expectation]]:
    """For a case holding every expectation a conversation gives: those to write, which
    some criterion of ``config`` judges (or that the case does not give: writing them
    costs nothing), and those it gives that no criterion judges."""
    unjudged = set(unjudged_fields(case, config))
    written = [e for e in EXPECTATIONS if EXPECTATION_FIELD[e] not in unjudged]
    left_out = [e for e in EXPECTATIONS if EXPECTATION_FIELD[e] in unjudged]
    return written, left_out
