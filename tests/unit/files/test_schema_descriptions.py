"""Every field of the eval-set and config JSON Schemas says what it is, so an editor's
completion explains each key (``agentflow-eval schema -o DIR``); so does every field of
results.json's schema (docs/results.schema.json)."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow_eval.criteria.config_schema import config_json_schema
from agentflow_eval.files.results_json import results_json_schema
from agentflow_eval.files.schemas import evalset_json_schema


def undescribed(node: Any, path: str = "") -> list[str]:
    """The paths of properties, anywhere in ``node``, that have no description."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in (node.get("properties") or {}).items():
            if isinstance(value, dict) and not value.get("description"):
                found.append(f"{path}.{key}")
        for key, value in node.items():
            found += undescribed(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += undescribed(value, f"{path}[{index}]")
    return found


@pytest.mark.parametrize("schema", [evalset_json_schema, config_json_schema, results_json_schema])
def test_every_property_has_a_description(schema) -> None:
    assert undescribed(schema()) == []


def test_descriptions_say_what_a_field_means() -> None:
    defs = evalset_json_schema()["$defs"]
    case = defs["EvalCase"]["properties"]
    assert "simulated user" in case["conversation_scenario"]["description"]
    assert case["conversationScenario"]["description"] == "Same as conversation_scenario."
    turn = defs["Invocation"]["properties"]
    assert "tool_trajectory_avg_score" in turn["expected_tool_trajectory"]["description"]
    config = config_json_schema()
    trajectory = config["$defs"]["TrajectoryOptions"]["properties"]
    assert "IN_ORDER" in trajectory["match_type"]["description"]
    own = config["$defs"]["CriterionOptions"]["properties"]
    assert "checks.py" in own["function"]["description"]
    criteria = config["properties"]["criteria"]
    assert "tool calls" in criteria["properties"]["tool_trajectory_avg_score"]["description"]
