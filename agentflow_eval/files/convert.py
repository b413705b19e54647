"""An eval set in the other format: agentflow-eval's native one, or Google ADK 2.13's (the
snake_case shape ADK's ``LocalEvalSetsManager`` writes). Whatever both formats can hold
goes across; what the target cannot hold is named (one line each) so nothing is lost in
silence: ADK's invocations take no fields of their own beyond ADK's, so a turn's
``expected_nodes`` and ``tool_mocks`` have no place there (ADK keeps a case's unknown
keys, so the case's expectations, context, metadata, tool mocks and seeded history do go
across); and a component case, which calls a function instead of an agent, is no ADK eval
case at all: it is left out."""

from __future__ import annotations

from typing import Any, Literal

from agentflow_eval.files.adk import to_adk_evalset
from agentflow_eval.files.authoring import case_data
from agentflow_eval.models.evalset import EvalSet

__all__ = ["Format", "convert"]

Format = Literal["native", "adk"]


def _lost_in_adk(eval_set: EvalSet) -> list[str]:
    lost = []
    components = [case.eval_id for case in eval_set.eval_cases if case.component is not None]
    if components:
        lost.append(
            f"ADK cannot run a component case (a function, not an agent): left out "
            f"{len(components)} case(s) ({_listed(components)})"
        )
    for field in ("expected_nodes", "tool_mocks"):
        turns = [
            f"{case.eval_id}/{inv.invocation_id or index + 1}"
            for case in eval_set.eval_cases
            for index, inv in enumerate(case.conversation)
            if getattr(inv, field)
        ]
        if turns:
            lost.append(
                f"ADK's invocations cannot hold {field}: left out of {len(turns)} turn(s) "
                f"({_listed(turns)})"
            )
    return lost


def _listed(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def convert(eval_set: EvalSet, to: Format) -> tuple[dict[str, Any], list[str]]:
    """``eval_set`` as ``to``'s file data, and one line per thing the target cannot hold
    (empty when nothing is lost)."""
    if to == "adk":
        agents_only = eval_set.model_copy(
            update={"eval_cases": [c for c in eval_set.eval_cases if c.component is None]}
        )
        return to_adk_evalset(agents_only), _lost_in_adk(eval_set)
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
