"""Every unusable file gives one EvalFileError whose text names the file, the case and
the field path as the author wrote them, and says what was expected and what was found."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.files.loading import EvalFileError, Problem, load_evalset

FIXTURES = Path(__file__).parents[2] / "fixtures"
BROKEN = FIXTURES / "broken"

# (file, loader, case_id, field, lines after "<path>: ")
CASES: list[tuple[str, Callable[[Path], Any], str | None, str | None, list[str]]] = [
    (
        "weather.evalset.json",
        load_evalset,
        "weather_lookup_simple",
        "conversation[0].expected_tool_trajectory[0].name",
        [
            "case 'weather_lookup_simple': "
            "conversation[0].expected_tool_trajectory[0].name: Field required"
        ],
    ),
    (
        "camel_typo.evalset.json",
        load_evalset,
        "typo_in_user_content",
        "conversation[0].userContent",
        [
            "2 problems:",
            "  case 'typo_in_user_content': conversation[0].userContent: Field required "
            "(found 'userContnt': a misspelling?)",
            "  case 'typo_in_user_content': conversation[0].userContnt: unknown field; "
            "did you mean 'userContent'?",
        ],
    ),
    (
        "bad_events.evalset.json",
        load_evalset,
        "freeze_without_name",
        "conversation[0].intermediate_data.invocation_events[1].content.parts[1]"
        ".function_call.name",
        [
            "case 'freeze_without_name': conversation[0].intermediate_data.invocation_events[1]"
            ".content.parts[1].function_call.name: Field required"
        ],
    ),
    (
        "several_errors.evalset.json",
        load_evalset,
        None,
        "eval_set_id",
        [
            "6 problems:",
            "  eval_set_id: Field required",
            "  eval_cases[0].eval_id: Field required",
            "  case 'no_turns': a case needs a non-empty 'conversation' or a "
            "'conversation_scenario'",
            "  case 'bad_types': conversation[0].user_content.parts[0].text: "
            "Input should be a valid string, found 42",
            "  case 'bad_types': conversation[0].expected_tool_trajectory[0].args: "
            "expected an object, found 'London'",
            "  case 'bad_types': session_input: expected an object, found 'weather_agent'",
        ],
    ),
    (
        "duplicate_ids.evalset.json",
        load_evalset,
        "weather_lookup_simple",
        "eval_id",
        [
            "case 'weather_lookup_simple': eval_id: duplicate eval_id, used by eval_cases[0], "
            "eval_cases[1]; ids must be unique within a set"
        ],
    ),
    (
        "bad_expectation.evalset.yaml",
        load_evalset,
        "add_numbers",
        "expectations[1].name",
        [
            "2 problems:",
            "  case 'add_numbers': expectations[1].name: Field required",
            "  case 'add_numbers': expectations[3]: Input tag 'replies_politely' found using "
            "'type' does not match any of the expected tags: 'completes', 'calls_tool', "
            "'final_contains'",
        ],
    ),
    (
        "missing_query.test.json",
        load_evalset,
        "missing_query",
        "[1].query",
        [
            "2 problems:",
            "  case 'missing_query': [1].query: Field required (found 'qurey': a misspelling?)",
            "  case 'missing_query': [1].expected_tool_use[0].tool_name: Field required",
        ],
    ),
    (
        "missing_data.evalset.json",
        load_evalset,
        "empty_case",
        "data",
        ["case 'empty_case': data: List should have at least 1 item after validation, not 0"],
    ),
    (
        "bad_syntax.evalset.json",
        load_evalset,
        None,
        None,
        ["invalid JSON at line 6, column 7: Expecting ',' delimiter"],
    ),
    (
        "bad_syntax.evalset.yaml",
        load_evalset,
        None,
        None,
        [
            "invalid YAML at line 6, column 6: expected <block end>, "
            "but found '<block mapping start>'"
        ],
    ),
    ("empty.evalset.json", load_evalset, None, None, ["file is empty"]),
    (
        "comments_only.evalset.yaml",
        load_evalset,
        None,
        None,
        ["file holds no data (only comments or an empty document)"],
    ),
    (
        "scalar.evalset.json",
        load_evalset,
        None,
        None,
        [
            "expected an object (an eval set) or a list (a legacy ADK test file) at the top "
            "level, found a string"
        ],
    ),
    (
        "empty_list.test.json",
        load_evalset,
        None,
        None,
        [
            'the file holds an empty list; a legacy ADK test file is a list of {"query": ..., '
            '"expected_tool_use": [...], "reference": ...} turns'
        ],
    ),
    (
        "notes.evalset.txt",
        load_evalset,
        None,
        None,
        ["unsupported file type '.txt'; expected .json, .yaml or .yml"],
    ),
    (
        "bad_match_type.json",
        load_config,
        None,
        "criteria.tool_trajectory_avg_score.match_type",
        [
            "criteria.tool_trajectory_avg_score.match_type: Input should be 'EXACT', "
            "'IN_ORDER' or 'ANY_ORDER', found 'fuzzy'"
        ],
    ),
    (
        "bad_criteria.yaml",
        load_config,
        None,
        "criteria.tool_trajectory_avg_score.treshold",
        [
            "5 problems:",
            "  criteria.tool_trajectory_avg_score.treshold: unknown field; "
            "did you mean 'threshold'?",
            "  criteria.response_match_score: expected a threshold (a number) or an object of "
            "criterion options, found 'high'",
            "  criteria.final_response_match_v2.threshold: Input should be less than or equal "
            "to 1, found 1.5",
            "  criteria.final_response_match_v2.judge_model_options.num_samples: Input should "
            "be greater than or equal to 1, found 0",
            "  user_simulator_config.max_allowed_invocations: Input should be a valid integer, "
            "unable to parse string as an integer, found 'ten'",
        ],
    ),
    (
        "list_config.json",
        load_config,
        None,
        None,
        ['expected an object such as {"criteria": {...}} at the top level, found a list'],
    ),
]


@pytest.mark.parametrize(
    ("name", "loader", "case_id", "field", "lines"), CASES, ids=[c[0] for c in CASES]
)
def test_broken_file_error_names_file_case_and_field(
    name: str,
    loader: Callable[[Path], Any],
    case_id: str | None,
    field: str | None,
    lines: list[str],
):
    path = BROKEN / name
    with pytest.raises(EvalFileError) as caught:
        loader(path)
    error = caught.value

    assert str(error) == f"{path}: " + "\n".join(lines)
    assert error.path == path
    assert (error.case_id, error.field) == (case_id, field)
    assert error.message == error.problems[0].message
    assert isinstance(error, ValueError)
    assert len(error.problems) == (len(lines) - 1 if len(lines) > 1 else 1)


def test_missing_file(tmp_path: Path):
    path = tmp_path / "nowhere.evalset.json"
    with pytest.raises(EvalFileError, match=r"nowhere\.evalset\.json: file not found$"):
        load_evalset(path)
    with pytest.raises(EvalFileError, match=r"file not found$"):
        load_config(tmp_path / "test_config.json")


def test_file_that_is_not_utf8(tmp_path: Path):
    path = tmp_path / "latin1.evalset.json"
    path.write_bytes('{"eval_set_id": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(EvalFileError) as caught:
        load_evalset(path)
    assert caught.value.message == "not UTF-8 text: undecodable byte at offset 20"


def test_case_without_a_usable_id_is_named_by_index(tmp_path: Path):
    path = tmp_path / "x.evalset.json"
    path.write_text(
        '{"eval_set_id": "x", "eval_cases": '
        '[{"eval_id": 7, "conversation": [{"user_content": 3}]}]}'
    )
    with pytest.raises(EvalFileError) as caught:
        load_evalset(path)
    assert [p.describe() for p in caught.value.problems] == [
        "eval_cases[0].eval_id: Input should be a valid string, found 7",
        "eval_cases[0].conversation[0].user_content: expected an object, found 3",
    ]


def test_long_lists_of_problems_are_cut_short(tmp_path: Path):
    turns = ",".join('{"user_content": "hi", "oops": 1}' for _ in range(25))
    path = tmp_path / "many.evalset.json"
    path.write_text(
        f'{{"eval_set_id": "m", "eval_cases": [{{"eval_id": "c", "conversation": [{turns}]}}]}}'
    )
    with pytest.raises(EvalFileError) as caught:
        load_evalset(path)
    text = str(caught.value).splitlines()
    assert len(caught.value.problems) == 25
    assert text[0] == f"{path}: 25 problems:"
    assert text[
        1
    ] == "  case 'c': conversation[0].oops: unknown field; expected one of: " + ", ".join(
        [
            "app_details",
            "creation_timestamp",
            "duration",
            "expected_final_response",
            "expected_intermediate_responses",
            "expected_nodes",
            "expected_tool_responses",
            "expected_tool_trajectory",
            "inference_call_count",
            "invocation_id",
            "model_duration",
            "rubrics",
            "tool_duration",
            "user_content",
        ]
    )
    assert len(text) == 22 and text[-1] == "  ... and 5 more"


def test_error_survives_pickling():
    error = EvalFileError.from_problems(
        "a.evalset.json",
        [Problem("Field required", field="eval_id", case_id=None), Problem("bad", case_id="c")],
    )
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error)
    assert copy.problems == error.problems
    assert (copy.path, copy.field, copy.message) == (
        Path("a.evalset.json"),
        "eval_id",
        "Field required",
    )


def test_an_error_needs_a_problem():
    with pytest.raises(ValueError, match="at least one problem"):
        EvalFileError.from_problems("a.json", [])


def test_single_problem_constructor():
    error = EvalFileError("a.json", "bad value", case_id="c1", field="conversation[0]")
    assert str(error) == "a.json: case 'c1': conversation[0]: bad value"
    assert (error.case_id, error.field, error.message) == ("c1", "conversation[0]", "bad value")
