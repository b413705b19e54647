"""A config's ``mcp_servers`` as files write them: each server checked when the config
is read, and a bad one refused before the run in one line naming the file and the field
(exit 2)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from agentflow_eval.environments.mcp import program_of
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.mcp_servers import McpServerSpec
from tests.support.cli_in_process import run_cli

EVALSET = {
    "eval_set_id": "desk",
    "eval_cases": [
        {
            "eval_id": "hi",
            "conversation": [{"user_content": "hi"}],
            "expectations": [{"final_contains": "hi"}],
        }
    ],
}


def test_a_stdio_server_command_may_be_written_as_one_string() -> None:
    spec = McpServerSpec.model_validate(
        {"name": "orders", "command": "python 'my server.py' --db x.db"}
    )
    assert spec.command == ["python", "my server.py", "--db", "x.db"]
    assert (spec.transport, spec.scope, spec.startup_timeout_s) == ("stdio", "trial", 30.0)


def test_a_url_server_may_be_shared_by_the_run() -> None:
    spec = McpServerSpec.model_validate(
        {"name": "search", "url": "https://tools.example/mcp", "scope": "run"}
    )
    assert (spec.transport, spec.scope) == ("http", "run")


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ({"name": "x"}, "give one of command (a stdio server) or url"),
        ({"name": "x", "command": ["s"], "url": "http://h/mcp"}, "give one of command"),
        ({"name": "x", "url": "ftp://h/mcp"}, "not an http:// or https:// URL"),
        ({"name": "x", "command": []}, "give the program to start"),
        ({"name": "x", "url": "http://h/mcp", "env": {"A": "1"}}, "env and cwd are for"),
        ({"name": "x y", "command": ["s"]}, "should match pattern"),
        ({"name": "x", "command": ["s"], "scope": "case"}, "'trial' or 'run'"),
        ({"name": "x", "command": ["s"], "startup_timeout_s": 0}, "greater than 0"),
        ({"name": "x", "command": ["s"], "port": 1}, "Extra inputs are not permitted"),
    ],
)
def test_a_bad_server_is_refused_saying_why(server: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        McpServerSpec.model_validate(server)


def test_two_servers_of_one_name_are_refused() -> None:
    with pytest.raises(ValidationError, match="two MCP servers are named 'orders'"):
        EvalConfig.model_validate(
            {
                "mcp_servers": [
                    {"name": "orders", "command": ["a"]},
                    {"name": "orders", "url": "http://h/mcp"},
                ]
            }
        )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "desk.evalset.json").write_text(json.dumps(EVALSET))
    (tmp_path / "plain_agent.py").write_text("def agent(message):\n    return 'hi'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def run_with(
    capsys: pytest.CaptureFixture[str],
    project: Path,
    config: object,
    agent: str = "plain_agent.py:agent",
) -> list[str]:
    (project / "mcp.config.json").write_text(json.dumps(config))
    result = run_cli(
        capsys,
        "run",
        agent,
        "desk.evalset.json",
        "--config",
        "mcp.config.json",
        "--no-prefect",
    )
    assert result.returncode == 2
    assert not list(project.glob("agentflow-results*")), "no run folder for bad input"
    return result.stderr.strip().splitlines()


def test_a_bad_server_stops_the_cli_in_one_line_naming_file_and_field(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    config = {"mcp_servers": [{"name": "orders", "url": "ftp://h/mcp"}]}
    assert run_with(capsys, project, config) == [
        "agentflow-eval: error: mcp.config.json: mcp_servers[0].url: not an http:// or "
        "https:// URL, found 'ftp://h/mcp'"
    ]


def test_an_agent_that_cannot_take_mcp_tools_is_refused_before_the_run(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    config = {"mcp_servers": [{"name": "orders", "command": ["python", "orders.py"]}]}
    # an agent behind an HTTP endpoint takes only messages: no tools can be handed to it
    [line] = run_with(capsys, project, config, agent="http://127.0.0.1:9/agent")
    assert line.startswith("agentflow-eval: error: mcp.config.json: mcp_servers: agent '")
    assert "cannot be given MCP servers' tools" in line


def test_python_as_a_servers_program_is_the_interpreter_running_the_evaluation() -> None:
    assert program_of("python") == program_of("python3") == sys.executable
    assert program_of("node") == "node"
    assert program_of("/usr/bin/python3") == "/usr/bin/python3"  # a path is the one named
