"""The CLI refuses tool mocks an agent cannot honour before anything runs: one line naming
file, case and field, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentflow_eval.cli import main


@pytest.fixture(autouse=True)
def _api_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's default (flow) path up to its refusal: with an API named (nothing
    listens there), it launches no temporary Prefect server, a process this tier does
    not start."""
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")


def test_an_http_agent_refuses_mocks_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evalset = tmp_path / "mocked.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "mocked",
                "eval_cases": [
                    {
                        "eval_id": "a",
                        "conversation": [{"user_content": "hi"}],
                        "tool_mocks": [{"tool": "get_weather", "result": 1}],
                    },
                    {"eval_id": "b", "conversation": [{"user_content": "hi"}]},
                ],
            }
        )
    )
    out = tmp_path / "out"
    code = main(["run", "http://127.0.0.1:9/v1", str(evalset), "--output", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0, err
    assert f"{evalset}: case 'a': tool_mocks: agent" in err and "no mock can reach" in err
    assert not out.exists()  # nothing written


def test_an_unknown_injection_payload_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evalset = tmp_path / "injected.evalset.json"
    mock = {"tool": "lookup", "result": {"id": 1}, "inject": "ignore_the_user"}
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "injected",
                "eval_cases": [
                    {
                        "eval_id": "a",
                        "conversation": [{"user_content": "hi"}],
                        "tool_mocks": [{"tool": "other", "result": 1}, mock],
                    }
                ],
            }
        )
    )
    agent = tmp_path / "agent.py"
    agent.write_text("def agent(message):\n    return 'hi'\n")
    out = tmp_path / "out"
    code = main(["run", f"{agent}:agent", str(evalset), "--output", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0, err
    assert f"{evalset}: case 'a': tool_mocks[1].inject: unknown injection payload" in err
    assert "'ignore_the_user'" in err and "ignore_user_canary" in err
    assert not out.exists()
