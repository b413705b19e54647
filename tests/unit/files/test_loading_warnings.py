"""Keys a loader keeps or ignores are reported as warnings naming file, case and key."""

from __future__ import annotations

import json
from pathlib import Path

from agentflow_eval.files.loading import load_evalset

FIXTURES = Path(__file__).parents[2] / "fixtures"


def test_unknown_keys_on_the_set_and_on_cases():
    path = FIXTURES / "warnings" / "extra_keys.evalset.json"
    loaded = load_evalset(path)

    assert loaded.warnings == [
        f"{path}: unknown key 'version' is ignored",
        f"{path}: case 'paris_forecast': unknown key 'owner' is kept but not used",
        f"{path}: case 'paris_forecast': unknown key 'sesion_input' is kept but not used; "
        "did you mean 'session_input'?",
    ]
    case = loaded.eval_set.case("paris_forecast")
    assert case.model_extra == {
        "sesion_input": {"app_name": "weather_agent", "user_id": "u1"},
        "owner": "weather-team",
    }
    assert case.session_input is None  # the misspelt key was not taken for the real one


def test_camel_case_typo_gets_a_camel_case_suggestion(tmp_path: Path):
    path = tmp_path / "c.evalset.json"
    data = {
        "evalSetId": "c",
        "evalCases": [
            {"evalId": "one", "conversation": [{"userContent": "hi"}], "sessionInptu": {}}
        ],
    }
    path.write_text(json.dumps(data))
    assert load_evalset(path).warnings == [
        f"{path}: case 'one': unknown key 'sessionInptu' is kept but not used; "
        "did you mean 'sessionInput'?"
    ]


def test_unknown_keys_in_legacy_turns_are_reported(tmp_path: Path):
    path = tmp_path / "greet.test.json"
    path.write_text(json.dumps([{"query": "Hello", "refrence": "Hi there"}]))
    loaded = load_evalset(path)

    assert f"{path}: case 'greet': unknown key '[0].refrence' is ignored" in loaded.warnings
    assert loaded.eval_set.eval_cases[0].conversation[0].expected_final_response is None


def test_clean_files_have_no_warnings():
    assert load_evalset(FIXTURES / "weather.evalset.json").warnings == []
    for name in ("adk/thermostat.evalset.json", "adk/card_support.evalset.json"):
        # ADK files carry what the recorded run's tools returned: kept, said not judged
        for warning in load_evalset(FIXTURES / name).warnings:
            assert "recorded tool responses" in warning and "not judged" in warning
