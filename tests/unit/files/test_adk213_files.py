"""Files written by Google ADK 2.13's own writers load with the cases, turns, tool calls
and references ADK itself reads from them.

``tests/fixtures/adk213/written/`` holds eval sets ADK 2.13 wrote (full ``model_dump``
with and without nulls, camelCase, its migration of a legacy ``*.test.json``, and what
its local eval-set manager saves for ``adk web``), configs it wrote (its JSON dumps write
``match_type`` as a number) or reads (``"in-order"``, ``"any order"``, an ignored
``evaluation_settings``), and ``adk_reads.json``: what ADK 2.13 read back from each file,
computed by ADK. Nothing here needs ADK installed.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.criteria.invocations import expected_text
from agentflow_eval.files.loading import load_evalset
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalCase, Invocation, Rubric

WRITTEN = Path(__file__).parents[2] / "fixtures" / "adk213" / "written"
ADK_READS = json.loads((WRITTEN / "adk_reads.json").read_text(encoding="utf-8"))
EVALSETS = sorted(ADK_READS["evalsets"])
CONFIGS = sorted(ADK_READS["configs"])


def test_the_fixtures_were_written_by_adk_2_13():
    assert ADK_READS["computed_with"]["google-adk"].startswith("2.13.")
    assert {
        "dump_full.evalset.json",
        "dump_no_nulls.evalset.json",
        "dump_camel.evalset.json",
        "dump_camel_no_nulls.evalset.json",
        "migrated.evalset.json",
        "web_saved.evalset.json",
    } <= set(EVALSETS)


# ---------------------------------------------------------------- what we read, as ADK's


def _rubrics(rubrics: list[Rubric]) -> list[list[str]]:
    return [[r.rubric_id, r.rubric_content] for r in rubrics]


def _invocation(inv: Invocation) -> dict[str, Any]:
    final = inv.expected_final_response
    return {
        "invocation_id": inv.invocation_id,
        "user_text": inv.user_content.text,
        "tool_calls": [{"name": c.name, "args": c.args} for c in inv.expected_tool_trajectory],
        "final_response": final.text if final is not None else "",
        "intermediate_texts": [m.text for m in inv.expected_intermediate_responses if m.text],
        "final_with_intermediate": expected_text(inv, include_intermediate=True),
        "rubrics": _rubrics(inv.rubrics),
    }


def _case(case: EvalCase) -> dict[str, Any]:
    session = case.session_input
    scenario = case.conversation_scenario
    return {
        "eval_id": case.eval_id,
        "session_input": None
        if session is None
        else {"app_name": session.app_name, "user_id": session.user_id, "state": session.state},
        "final_session_state": case.final_session_state or {},
        "rubrics": _rubrics(case.rubrics),
        "conversation_scenario": None
        if scenario is None
        else {
            "starting_prompt": scenario.starting_prompt,
            "conversation_plan": scenario.conversation_plan,
        },
        "invocations": [_invocation(inv) for inv in case.conversation],
    }


@pytest.mark.parametrize("name", EVALSETS)
def test_an_adk_written_evalset_reads_as_adk_reads_it(name: str):
    adk = copy.deepcopy(ADK_READS["evalsets"][name])  # the module's copy stays as read
    eval_set = load_evalset(WRITTEN / name).eval_set
    assert eval_set.eval_set_id == adk["eval_set_id"]
    assert eval_set.name == (adk["name"] or "")
    assert eval_set.description == (adk["description"] or "")
    for case in adk["cases"]:  # ADK leaves a missing id empty; this package numbers it
        for number, inv in enumerate(case["invocations"], 1):
            inv["invocation_id"] = inv["invocation_id"] or f"{case['eval_id']}-{number}"
    assert [_case(case) for case in eval_set.eval_cases] == adk["cases"]


def test_the_legacy_file_reads_as_adks_own_migration_of_it():
    """The legacy test file ADK migrated: the same turns, tool calls and references (ids
    differ: ADK makes random ones, this package stable ones)."""
    (migrated,) = copy.deepcopy(ADK_READS["evalsets"]["migrated.evalset.json"]["cases"])
    (case,) = load_evalset(WRITTEN / "legacy_source.test.json").eval_set.eval_cases
    ours = _case(case)
    for turn in [*ours["invocations"], *migrated["invocations"]]:
        turn.pop("invocation_id")
    assert ours["invocations"] == migrated["invocations"]


def test_adk_durations_and_recorded_run_details_are_kept():
    eval_set = load_evalset(WRITTEN / "dump_full.evalset.json").eval_set
    first = eval_set.case("weather_two_cities").conversation[0]
    assert (first.duration, first.model_duration, first.tool_duration) == (2.5, 1.75, 0.5)
    assert first.creation_timestamp == 1767225600.5
    assert first.app_details is not None and "weather_agent" in first.app_details["agent_details"]
    assert first.expected_tool_responses[0]["response"] == {"condition": "sunny", "temperature": 75}
    assert first.rubrics[0].type == "FINAL_RESPONSE_QUALITY"
    recorded = eval_set.case("recorded_session").conversation[0]
    assert [r["name"] for r in recorded.expected_tool_responses] == ["session_note_append", "add"]
    session = eval_set.case("weather_two_cities").session_input
    assert session is not None and session.session_id == "fixed-session"


@pytest.mark.parametrize("name", EVALSETS)
def test_what_adk_records_but_nothing_judges_is_named_in_a_warning(name: str):
    loaded = load_evalset(WRITTEN / name)
    text = "\n".join(loaded.warnings)
    if "weather_two_cities" in {c.eval_id for c in loaded.eval_set.eval_cases}:
        assert "app_details" in text
        assert "tool_responses" in text
        assert "session_id" in text
    for warning in loaded.warnings:
        assert warning.startswith(str(WRITTEN / name))


# --------------------------------------------------------------------------- configs


def _config(config: EvalConfig) -> dict[str, Any]:
    metrics = {}
    for name, options in config.criteria.items():
        view: dict[str, Any] = {
            "threshold": options.threshold,
            "include_intermediate_responses_in_final": (
                options.include_intermediate_responses_in_final
            ),
        }
        if name == "tool_trajectory_avg_score":
            view["match_type"] = options.match_type
            view["ignore_args"] = options.args_match == "ignore"
        # each criterion's options are its own model's: judge options on the LLM judges
        if getattr(options, "judge_model_options", None) is not None:
            view["judge_model"] = options.judge_model
            view["num_samples"] = options.num_samples
            view["parallelism_limit"] = options.judge_model_options.parallelism_limit
            view["judge_temperature"] = options.temperature
        if getattr(options, "rubrics", None):
            view["rubrics"] = _rubrics(options.rubrics)
        if name == "hallucinations_v1":
            view["evaluate_intermediate_nl_responses"] = options.evaluate_intermediate_nl_responses
        metrics[name] = view
    simulator = config.user_simulator_config
    return {
        "metrics": metrics,
        "user_simulator": None
        if simulator is None
        else {
            "type": simulator.type,
            "model": simulator.model,
            "max_allowed_invocations": simulator.max_allowed_invocations,
            "temperature": (simulator.model_extra or {}).get("temperature"),
        },
    }


@pytest.mark.parametrize("name", CONFIGS)
def test_an_adk_config_reads_as_adk_reads_it(name: str):
    adk = dict(ADK_READS["configs"][name])
    live = adk.pop("live_model_config")
    config = load_config(WRITTEN / name)
    assert _config(config) == adk
    if live is not None:
        assert any(
            "live_model_config is ignored" in w or "liveModelConfig is ignored" in w
            for w in config.load_warnings
        )


def test_keys_adk_ignores_are_warnings_and_options_it_reads_are_used():
    config = load_config(WRITTEN / "config_spellings_in_order.json")
    trajectory = config.criteria["tool_trajectory_avg_score"]
    assert trajectory.match_type == "IN_ORDER"
    warnings = config.load_warnings
    assert any("unknown key 'evaluation_settings' is ignored" in w for w in warnings)
    assert any(
        "response_match_score.include_intermediate_responses_in_final has no effect" in w
        for w in warnings
    )
    full = load_config(WRITTEN / "config_full.json")
    assert full.criteria["tool_trajectory_avg_score"].args_match == "ignore"
    assert any("parallelism_limit is not used" in w for w in full.load_warnings)


@pytest.mark.parametrize("name", EVALSETS)
def test_writing_an_adk_file_back_keeps_what_adk_reads(name: str, tmp_path: Path):
    from agentflow_eval.files.adk import to_adk_evalset

    eval_set = load_evalset(WRITTEN / name).eval_set
    path = tmp_path / name
    path.write_text(json.dumps(to_adk_evalset(eval_set)), encoding="utf-8")
    again = load_evalset(path).eval_set
    assert [_case(c) for c in again.eval_cases] == [_case(c) for c in eval_set.eval_cases]
    first, second = eval_set.eval_cases[0].conversation, again.eval_cases[0].conversation
    for before, after in zip(first, second, strict=True):
        assert after.model_dump(exclude_none=True) == before.model_dump(exclude_none=True)
