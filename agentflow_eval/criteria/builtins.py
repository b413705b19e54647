"""The built-in criteria: each one's declaration (:mod:`agentflow_eval.criteria.spec`),
listed once here. The registry (:mod:`agentflow_eval.criteria.registry`) registers them
through the same call a package's own criteria go through, the first time it is asked.

A new built-in criterion is its module, its line here, its tests and its row in
docs/criteria.md (tests/unit/criteria/test_criteria_declarations.py checks that every
declaration in the package is listed here, and every listed one has its row)."""

from __future__ import annotations

from typing import Any

from agentflow_eval.criteria import (
    budget,
    efficiency,
    end_state,
    expectations,
    injection,
    intermediate,
    nodes,
    output,
    response,
    session_state,
    trajectory,
)
from agentflow_eval.criteria.judges import (
    coherence,
    final_response,
    hallucinations,
    multi_turn,
    multi_turn_rubrics,
    rubrics,
    safety,
    simulator_quality,
)
from agentflow_eval.criteria.spec import CriterionSpec

__all__ = ["BUILTIN_CRITERIA"]

BUILTIN_CRITERIA: tuple[CriterionSpec[Any], ...] = (
    # what the agent did: its tool calls, the nodes it went through, its state
    trajectory.build_tool_trajectory,
    nodes.build_node_trajectory,
    session_state.build_final_session_state,
    # the world it left: its environment's end state
    end_state.build_end_state,
    # whether it obeyed instructions its tools' outputs slipped in
    injection.build_injection,
    # what it answered, compared without a judge
    response.build_response_match,
    intermediate.build_intermediate_response_match,
    output.build_output_matches,
    # the simple expectations a case states
    expectations.build_completes,
    expectations.build_calls_tool,
    expectations.build_final_contains,
    # what it spent
    efficiency.build_tool_call_count,
    efficiency.build_inference_call_count,
    efficiency.build_token_usage,
    efficiency.build_invocation_duration,
    budget.build_within_budget,
    # LLM judges
    final_response.build_final_response_match,
    rubrics.build_final_response_rubrics,
    rubrics.build_tool_use_rubrics,
    hallucinations.build_hallucinations,
    safety.build_safety,
    coherence.build_coherence,
    # LLM judges of the whole conversation
    multi_turn.build_task_success,
    multi_turn.build_trajectory_quality,
    multi_turn.build_tool_use_quality,
    multi_turn_rubrics.build_multi_turn_rubrics,
    simulator_quality.build_simulator_quality,
)
