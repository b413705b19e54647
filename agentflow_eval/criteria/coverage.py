"""What the config's criteria leave unjudged: an expectation a case gives (an expected
tool trajectory, a final session state, rubrics...) that no criterion of the run reads,
said before the run starts rather than passed over in silence."""

from __future__ import annotations

from agentflow_eval.criteria.registry import default_applies
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalCase, EvalSet

__all__ = ["unjudged_warnings"]

_JUDGED_BY: dict[str, tuple[tuple[str, ...], str]] = {
    "expected_tool_trajectory": (
        ("tool_trajectory_avg_score",),
        "add tool_trajectory_avg_score to the config's criteria",
    ),
    "expected_final_response": (
        ("response_match_score", "final_response_match_v2"),
        "add response_match_score or final_response_match_v2 to the config's criteria",
    ),
    "expected_intermediate_responses": (
        ("intermediate_response_match_score",),
        "add intermediate_response_match_score, or include_intermediate_responses_in_final "
        "on final_response_match_v2 or rubric_based_final_response_quality_v1",
    ),
    "final_session_state": (
        ("final_session_state_match",),
        "add final_session_state_match to the config's criteria",
    ),
    "rubrics": (
        ("rubric_based_final_response_quality_v1", "rubric_based_tool_use_quality_v1"),
        "add rubric_based_final_response_quality_v1 or rubric_based_tool_use_quality_v1",
    ),
}
_INTERMEDIATE_IN_FINAL = ("final_response_match_v2", "rubric_based_final_response_quality_v1")
_LISTED_CASES = 5


def _gives(case: EvalCase, field_name: str) -> bool:
    turns = case.conversation
    if field_name == "expected_tool_trajectory":
        return any(inv.expected_tool_trajectory for inv in turns)
    if field_name == "expected_final_response":
        return any(
            inv.expected_final_response and inv.expected_final_response.text for inv in turns
        )
    if field_name == "expected_intermediate_responses":
        return any(m.text for inv in turns for m in inv.expected_intermediate_responses)
    if field_name == "final_session_state":
        return bool(case.final_session_state)
    return bool(case.rubrics) or any(inv.rubrics for inv in turns)


def unjudged_warnings(eval_set: EvalSet, config: EvalConfig) -> list[str]:
    """One warning per expectation that some case gives and no criterion of ``config``
    judges for that case (say, a ``final_session_state`` without
    ``final_session_state_match``), naming the field, the cases and what would judge it.
    Nothing is said when the config has a custom criterion: it may read any field."""
    if any(options.function for options in config.criteria.values()):
        return []
    unjudged: dict[str, list[str]] = {}
    for case in eval_set.eval_cases:
        names = {
            name
            for name, options in config.criteria.items()
            if not options.defaulted or default_applies(name, case)
        }
        in_final = any(
            config.criteria[name].include_intermediate_responses_in_final
            for name in names & set(_INTERMEDIATE_IN_FINAL)
        )
        for field_name, (judges, _) in _JUDGED_BY.items():
            judged = bool(names & set(judges)) or (
                field_name == "expected_intermediate_responses" and in_final
            )
            if not judged and _gives(case, field_name):
                unjudged.setdefault(field_name, []).append(case.eval_id)
    warnings = []
    for field_name, case_ids in unjudged.items():
        listed = ", ".join(repr(c) for c in case_ids[:_LISTED_CASES])
        more = f" and {len(case_ids) - _LISTED_CASES} more" if len(case_ids) > _LISTED_CASES else ""
        warnings.append(
            f"{field_name} is given by {len(case_ids)} case(s) but no criterion judges it "
            f"({_JUDGED_BY[field_name][1]}): {listed}{more}"
        )
    return warnings
