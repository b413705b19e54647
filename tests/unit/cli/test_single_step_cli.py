"""Single-step cases through the CLI: what it refuses before anything runs (a seeded
history the agent cannot take, a case that needs an agent when none is named, a component
that cannot be used), each in one line with exit 2 and nothing written; and how it reads
one positional argument."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentflow_eval.cli import main
from tests.unit.agents.test_seeded_history import seeded_set


@pytest.fixture(autouse=True)
def _api_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's default (flow) path up to its refusal: with an API named (nothing
    listens there), it launches no temporary Prefect server, a process this tier does
    not start."""
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")


def test_an_agent_that_cannot_take_a_history_refuses_it_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = tmp_path / "stateless_agent.py"
    agent.write_text(
        "from agentflow_eval.agents.python import PythonAgent\n"
        "class Stateless(PythonAgent):\n"
        "    history_supported = False\n"
        "agent = Stateless(lambda message: 'hi', name='stateless')\n"
    )
    evalset = tmp_path / "seeded.evalset.json"
    evalset.write_text(json.dumps(seeded_set("Book it").model_dump(mode="json")))
    out = tmp_path / "out"
    code = main(["run", f"{agent}:agent", str(evalset), "--output", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == (
        f"agentflow-eval: error: {evalset}: case 'book': history: agent 'stateless' cannot "
        "start from a seeded history; remove it, or evaluate another kind of agent"
    )
    assert not out.exists()  # nothing written


def test_a_case_that_needs_an_agent_without_one_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "intents.py"
    module.write_text("def classify(text):\n    return 'other'\n")
    evalset = tmp_path / "mixed.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "mixed",
                "eval_cases": [
                    {
                        "eval_id": "fn",
                        "component": f"{module}:classify",
                        "input": "x",
                        "expected_output": "other",
                    },
                    {"eval_id": "chat", "conversation": [{"user_content": "hi"}]},
                ],
            }
        )
    )
    out = tmp_path / "out"
    assert main(["run", str(evalset), "--output", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"agentflow-eval: error: {evalset}: case 'chat': this case runs an agent, and none was "
        "given: name one (agentflow-eval run AGENT EVALSET)"
    )
    assert not out.exists()


def test_a_bad_target_stops_the_cli_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evalset = tmp_path / "intents.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "intents",
                "eval_cases": [
                    {
                        "eval_id": "a",
                        "component": "intents:classify",
                        "input": "x",
                        "expected_output": "y",
                    }
                ],
            }
        )
    )
    out = tmp_path / "out"
    assert main(["run", str(evalset), "--output", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(
        f"agentflow-eval: error: {evalset}: case 'a': component: 'intents:classify': importing "
        "'intents' failed: ModuleNotFoundError"
    )
    assert not out.exists()


def test_one_positional_is_an_eval_set_only_when_it_names_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "intents.py"
    module.write_text("def classify(text):\n    return 'other'\n")
    evalset = tmp_path / "intents.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "intents",
                "eval_cases": [
                    {"eval_id": "a", "component": f"{module}:classify", "input": "x"}
                    | {"expected_output": "other"}
                ],
            }
        )
    )
    out = tmp_path / "out"
    assert main(["run", str(evalset), "--model", "openai/gpt-4o", "--output", str(out)]) == 2
    assert capsys.readouterr().err == (
        "agentflow-eval: error: model 'openai/gpt-4o' is for an agent, and no agent was given\n"
    )
    assert main(["run", f"{module}:classify", "--output", str(out)]) == 2
    assert "run needs AGENT and EVALSET (EVALSET alone when every case is a component case)" in (
        capsys.readouterr().err
    )
    assert not out.exists()
