"""An eval set in the other format: agentflow-eval's native one, or Google ADK 2.13's (the
snake_case shape ADK's ``LocalEvalSetsManager`` writes). Whatever both formats can hold
goes across; what the target cannot hold is named (one line each) so nothing is lost in
silence: ADK's invocations take no fields of their own beyond ADK's, so a turn's
``expected_nodes`` and ``tool_mocks`` have no place there (ADK keeps a case's unknown
keys, so the case's expectations, context, metadata and tool mocks do go across)."""

from __future__ import annotations

from typing import Any, Literal

from agentflow_eval.files.adk import to_adk_evalset
from agentflow_eval.files.authoring import case_data
from agentflow_eval.models.evalset import EvalSet

__all__ = ["Format", "convert"]

Format = Literal["native", "adk"]


def _lost_in_adk(eval_set: EvalSet) -> list[str]:
    lost = []
    for field in ("expected_nodes", "tool_mocks"):
        turns = [
            f"{case.eval_id}/{inv.invocation_id or index + 1}"
            for case in eval_set.eval_cases
            for index, inv in enumerate(case.conversation)
            if getattr(inv, field)
        ]
        if turns:
            listed = ", ".join(turns[:5]) + (
                f" and {len(turns) - 5} more" if len(turns) > 5 else ""
            )
            lost.append(
                f"ADK's invocations cannot hold {field}: left out of {len(turns)} turn(s) "
                f"({listed})"
            )
    return lost


def convert(eval_set: EvalSet, to: Format) -> tuple[dict[str, Any], list[str]]:
    """``eval_set`` as ``to``'s file data, and one line per thing the target cannot hold
    (empty when nothing is lost)."""
    if to == "adk":
        return to_adk_evalset(eval_set), _lost_in_adk(eval_set)
    if to != "native":
        raise ValueError(f"--to must be native or adk, got {to!r}")
    data: dict[str, Any] = {"eval_set_id": eval_set.eval_set_id}
    if eval_set.name:
        data["name"] = eval_set.name
    if eval_set.description:
        data["description"] = eval_set.description
    data["eval_cases"] = [_native_roles(case_data(case)) for case in eval_set.eval_cases]
    if eval_set.creation_timestamp is not None:
        data["creation_timestamp"] = eval_set.creation_timestamp
    return data, []


def _native_roles(node: Any) -> Any:
    """ADK's ``model`` role written as the native ``assistant``."""
    if isinstance(node, dict):
        return {
            key: "assistant" if key == "role" and value == "model" else _native_roles(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_native_roles(item) for item in node]
    return node
