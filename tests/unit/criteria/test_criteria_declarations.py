"""Criteria declare themselves: each built-in criterion's module holds its options model and
its declaration, the declarations are listed once (criteria/builtins.py), and everything
that asks "which criterion does what" derives the answer from the declarations. A new
built-in criterion touches its module, its line in the list, its test and its row in
docs/criteria.md, nothing else."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import sys
import textwrap
from pathlib import Path

import pytest

import agentflow_eval.criteria as criteria_package
from agentflow_eval.criteria.builtins import BUILTIN_CRITERIA
from agentflow_eval.criteria.config_schema import config_json_schema
from agentflow_eval.criteria.coverage import judge_hint
from agentflow_eval.criteria.fields import EXPECTATION_FIELDS
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.registry import (
    CATALOGUE,
    CRITERIA,
    CriterionSpec,
    judged_fields,
    known_criteria,
    known_llm_criteria,
    options_model,
    spec_of,
    specs,
)
from agentflow_eval.models.config import CriterionConfig

ROOT = Path(__file__).parents[3]
PACKAGE = ROOT / "agentflow_eval"


def built_in() -> list[CriterionSpec]:
    return [s for s in specs() if s.build.__module__.startswith("agentflow_eval.criteria.")]


BUILT_IN = {spec.name for spec in built_in()}


def declarations_in_the_package() -> dict[str, str]:
    """Every criterion declared in a module of the criteria package (this test walks it;
    the registry does not), by name: the module that declares it."""
    found: dict[str, str] = {}
    for info in pkgutil.walk_packages(criteria_package.__path__, "agentflow_eval.criteria."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, CriterionSpec) and value.build.__module__ == module.__name__:
                found[value.name] = module.__name__
    return found


def test_every_declared_criterion_is_listed_and_every_listed_one_declared():
    listed = [spec.name for spec in BUILTIN_CRITERIA]
    assert len(listed) == len(set(listed)), "a criterion listed twice"
    assert set(listed) == set(declarations_in_the_package())
    assert set(listed) == BUILT_IN  # the registry holds what the list holds


STRAY = '''
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.spec import criterion


@criterion("stray_criterion", CriterionOptions)
def build_stray(name, options, config):
    """A criterion only declared: nothing builds it here."""
    raise AssertionError("never built")
'''


def test_a_criterion_module_left_out_of_the_list_is_not_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    (tmp_path / "stray_criterion.py").write_text(textwrap.dedent(STRAY), "utf-8")
    monkeypatch.setattr(criteria_package, "__path__", [*criteria_package.__path__, str(tmp_path)])
    try:
        # the check above names it ...
        assert declarations_in_the_package()["stray_criterion"] == (
            "agentflow_eval.criteria.stray_criterion"
        )
        # ... and the registry, which walks nothing, does not know it
        CRITERIA.reload()
        assert "stray_criterion" not in known_criteria()
        assert set(known_criteria()) >= BUILT_IN
    finally:
        sys.modules.pop("agentflow_eval.criteria.stray_criterion", None)


def test_the_built_in_criteria_are_these():
    assert {
        "calls_tool",
        "completes",
        "end_state_match",
        "final_contains",
        "final_response_match_v2",
        "final_session_state_match",
        "hallucinations_v1",
        "injection_resisted",
        "inference_call_count_v1",
        "invocation_duration_v1",
        "intermediate_response_match_score",
        "multi_turn_task_success_v1",
        "multi_turn_tool_use_quality_v1",
        "multi_turn_trajectory_quality_v1",
        "node_trajectory_avg_score",
        "output_matches",
        "per_turn_user_simulator_quality_v1",
        "response_evaluation_score",
        "response_match_score",
        "rubric_based_final_response_quality_v1",
        "rubric_based_multi_turn_trajectory_quality_v1",
        "rubric_based_tool_use_quality_v1",
        "safety_v1",
        "token_usage_v1",
        "tool_call_count_v1",
        "tool_trajectory_avg_score",
        "within_budget",
    } == BUILT_IN
    assert set(known_criteria()) >= BUILT_IN


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_each_criterion_owns_an_options_model_of_what_it_reads(name: str):
    spec = spec_of(name)
    assert spec is not None
    assert issubclass(spec.options, CriterionOptions)
    assert spec.options.model_config.get("extra") == "forbid"
    assert spec.description, f"{name}: its build function's docstring says what it measures"
    # the options model lives with the criterion, or is a shared base
    assert spec.options.__module__ in (
        spec.build.__module__,
        CriterionOptions.__module__,
        JudgeCriterionOptions.__module__,
    )


def test_what_the_registry_derives_is_what_the_criteria_declare():
    declared = built_in()
    assert known_llm_criteria() == {s.name for s in specs() if s.calls_judge}
    assert {s.name for s in declared if s.calls_judge} == {
        "final_response_match_v2",
        "hallucinations_v1",
        "multi_turn_task_success_v1",
        "multi_turn_tool_use_quality_v1",
        "multi_turn_trajectory_quality_v1",
        "per_turn_user_simulator_quality_v1",
        "response_evaluation_score",
        "rubric_based_final_response_quality_v1",
        "rubric_based_multi_turn_trajectory_quality_v1",
        "rubric_based_tool_use_quality_v1",
        "safety_v1",
    }
    for spec in declared:
        assert spec.calls_judge == issubclass(spec.options, JudgeCriterionOptions)
        entry = CriterionConfig()
        assert judged_fields(spec.name, entry) == frozenset(spec.judges)
        assert options_model(spec.name, {"threshold": 0.5}) is spec.options
    assert {s.name for s in declared if s.needs_rubrics} == {
        "rubric_based_final_response_quality_v1",
        "rubric_based_multi_turn_trajectory_quality_v1",
        "rubric_based_tool_use_quality_v1",
    }
    # every expectation a case can give has a criterion that judges it, and the warning
    # about an unjudged one names what would
    for field in EXPECTATION_FIELDS:
        judges = [s.name for s in declared if field in s.judges]
        assert judges, field
        assert all(name in judge_hint(field) for name in judges)


def test_reading_intermediate_responses_with_the_answer_is_declared():
    readers = {s.name for s in specs() if s.intermediate_in_final}
    assert readers == {"final_response_match_v2", "rubric_based_final_response_quality_v1"}
    with_them = CriterionConfig(include_intermediate_responses_in_final=True)
    for name in readers:
        assert "expected_intermediate_responses" in judged_fields(name, with_them)
    warned = CATALOGUE.entry_warnings(
        "response_match_score", {"include_intermediate_responses_in_final": True}
    )
    assert len(warned) == 1 and all(name in warned[0] for name in readers)
    assert (
        CATALOGUE.entry_warnings(
            "final_response_match_v2", {"include_intermediate_responses_in_final": True}
        )
        == []
    )


def test_the_config_schema_describes_each_criterions_own_options():
    schema = config_json_schema()
    entries = schema["properties"]["criteria"]["properties"]
    assert set(entries) == BUILT_IN
    for name in BUILT_IN:
        spec = spec_of(name)
        assert spec is not None
        refs = [alt.get("$ref") for alt in entries[name]["anyOf"]]
        assert f"#/$defs/{spec.options.__name__}" in refs
        assert entries[name]["description"] == spec.description


def _criteria_table() -> set[str]:
    """The names in the first column of docs/criteria.md's table of criteria."""
    lines = (ROOT / "docs" / "criteria.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| criterion"))
    names: set[str] = set()
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        names |= {part.strip().strip("`") for part in line.split("|")[1].split(",")}
    return names


def test_each_built_in_criterion_has_a_row_in_the_criteria_page():
    assert BUILT_IN - _criteria_table() == set()


# Where a criterion's name may be written outside its own module, and why.
NAMED_ON_PURPOSE = {
    # the demo plugin answers the criteria it knows, by name
    "agentflow_eval/demo/judge.py",
    # ADK's default config (tool_trajectory_avg_score 1.0, response_match_score 0.8)
    "agentflow_eval/models/config.py",
    # case expectations ("completes", {"calls_tool": ...}) are a file format's tags
    "agentflow_eval/models/evalset.py",
    "agentflow_eval/files/schemas.py",
    # the report page draws these two criteria's detail rows (expected against actual)
    "agentflow_eval/report/view.py",
}


def test_no_hand_kept_list_names_the_criteria():
    """A criterion's name, as a string, is written in its own module only (and in the
    places above, which name it on purpose): no list elsewhere has to learn a new one."""
    own = {spec.name: spec.build.__module__ for spec in built_in()}
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if relative in NAMED_ON_PURPOSE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = isinstance(node, ast.Constant) and node.value in own
            if named and own[node.value] != module:
                found.append(f"{relative}:{node.lineno}: {node.value!r}")
    assert found == []
