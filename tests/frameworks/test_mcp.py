"""MCP servers as tools: a real stdio MCP server (``tests/support/mcp_orders.py``, the
official SDK's ``MCPServer``) started by each trial, its tools given to the built-in
LiteLLM agent and to framework adapters, against the scripted model server on 127.0.0.1.
The calls must be in the trajectory with the server's own results, a tool mock must
answer for one MCP tool, and no server process may outlive the run however it ended."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.criteria.config_files import config_from_data
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import RecordedToolCall, RunResult
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from tests.support.mcp_processes import http_server, server_command, server_pids

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="processes are read from /proc")

MOCKED_LOOKUP = {"id": "A-1", "status": "lost in transit"}


def refund_model(body: dict[str, Any]) -> Reply:
    """Looks order A-1 up, refunds it, then answers with what the two tools said."""
    messages = body["messages"]
    tool_results = [m["content"] for m in messages if m["role"] == "tool"]
    if not tool_results:
        return Reply.tools(("lookup_order", {"order_id": "A-1"}))
    if len(tool_results) == 1:
        return Reply.tools(("refund_order", {"order_id": "A-1", "reason": "broken"}))
    return Reply.text(" | ".join(tool_results))


def evalset() -> EvalSet:
    return EvalSet.model_validate(
        {
            "eval_set_id": "mcp_orders",
            "eval_cases": [
                {"eval_id": "refund", "conversation": [{"user_content": "Refund order A-1."}]}
            ],
        }
    )


def mcp_config(*, scope: str = "trial", **extra: Any) -> Any:
    return config_from_data(
        {
            "criteria": {"completes": 1.0},
            "mcp_servers": [{"name": "orders", "command": server_command(), "scope": scope}],
            **extra,
        }
    )


def calls(run: RunResult, trial: int = 0) -> list[RecordedToolCall]:
    [turn] = run.trials[trial].trial.turns
    return turn.tool_calls


def each_trial_refunded_on_its_own_server(run: RunResult, *, answers: bool = True) -> None:
    """Both trials passed, each looking order A-1 up (the server's first call) and
    refunding it on a server of its own: never "already refunded", two server pids. With
    ``answers``, each final answer quotes the refund."""
    assert [t.status for t in run.trials] == ["passed", "passed"], run.trials[0].trial.error
    pids = set()
    for index, trial in enumerate(run.trials):
        lookup, refund = calls(run, index)
        assert (lookup.name, lookup.args, lookup.served_by) == (
            "lookup_order",
            {"order_id": "A-1"},
            "tool",
        )
        found = value(lookup.result)
        assert (found["status"], found["calls"]) == ("delivered", 1)
        pids.add(found["pid"])
        assert (refund.name, value(refund.result), refund.error) == (
            "refund_order",
            "refunded A-1: 42.0",
            None,
        )
        if answers:
            answer = trial.trial.turns[0].final_response
            assert answer is not None and "refunded A-1: 42.0" in answer
    assert len(pids) == 2  # one server process per trial


def litellm_agent(server: ScriptedOpenAIServer) -> LiteLLMAgent:
    return LiteLLMAgent("openai/scripted", api_base=server.url, api_key="test", name="desk")


async def test_litellm_agent_calls_each_trials_own_server(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(handler=refund_model) as server:
        run = await evaluate(
            litellm_agent(server), evalset(), mcp_config(), runs=2, output_dir=tmp_path
        )
        offered = {tool["function"]["name"] for tool in server.requests[0]["tools"]}
    assert offered == {"lookup_order", "refund_order"}
    each_trial_refunded_on_its_own_server(run)
    assert server_pids() == []


async def test_a_run_scoped_server_is_started_once_for_every_trial(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(handler=refund_model) as server:
        run = await evaluate(
            litellm_agent(server),
            evalset(),
            mcp_config(scope="run"),
            runs=2,
            max_concurrency=1,
            output_dir=tmp_path,
        )
    first, second = calls(run, 0)[0], calls(run, 1)[0]
    assert first.result["pid"] == second.result["pid"]
    assert sorted([first.result["calls"], second.result["calls"]]) == [1, 3]
    # the server's state is shared: one of the two refunds found it made already
    refunds = sorted(str(calls(run, i)[1].result) for i in range(2))
    assert refunds == ["A-1 was already refunded", "refunded A-1: 42.0"]
    assert server_pids() == []


async def test_a_server_at_a_streamable_http_url_serves_the_run(tmp_path: Path) -> None:
    with http_server() as url, ScriptedOpenAIServer(handler=refund_model) as server:
        config = config_from_data(
            {"criteria": {"completes": 1.0}, "mcp_servers": [{"name": "orders", "url": url}]}
        )
        run = await evaluate(litellm_agent(server), evalset(), config, runs=1, output_dir=tmp_path)
    lookup, refund = calls(run)
    assert (lookup.name, lookup.result["status"]) == ("lookup_order", "delivered")
    assert (refund.name, refund.result) == ("refund_order", "refunded A-1: 42.0")
    assert run.trials[0].status == "passed"


async def test_a_tool_mock_answers_for_one_mcp_tool(tmp_path: Path) -> None:
    config = mcp_config(tool_mocks=[{"tool": "lookup_order", "result": MOCKED_LOOKUP}])
    with ScriptedOpenAIServer(handler=refund_model) as server:
        run = await evaluate(litellm_agent(server), evalset(), config, runs=1, output_dir=tmp_path)
        sent = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    lookup, refund = calls(run)
    assert (lookup.served_by, lookup.result) == ("mock", MOCKED_LOOKUP)
    assert (refund.served_by, refund.result) == ("tool", "refunded A-1: 42.0")
    assert json.loads(sent[0]) == MOCKED_LOOKUP  # the model saw the mock's answer
    assert server_pids() == []


async def test_a_server_error_is_the_calls_error(tmp_path: Path) -> None:
    def unknown_order(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply.text("no such order")
        return Reply.tools(("lookup_order", {"order_id": "Z-9"}))

    with ScriptedOpenAIServer(handler=unknown_order) as server:
        run = await evaluate(
            litellm_agent(server), evalset(), mcp_config(), runs=1, output_dir=tmp_path
        )
    [lookup] = calls(run)
    assert lookup.error is not None and "lookup_order" in lookup.error
    assert run.trials[0].trial.error is None  # news for the model, not a crash


async def test_a_trial_the_model_failed_stops_its_server(tmp_path: Path) -> None:
    def failing_after_a_lookup(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply.error(400, "the model refused")
        return Reply.tools(("lookup_order", {"order_id": "A-1"}))

    with ScriptedOpenAIServer(handler=failing_after_a_lookup) as server:
        run = await evaluate(
            litellm_agent(server), evalset(), mcp_config(), runs=1, output_dir=tmp_path
        )
    [lookup] = calls(run)
    assert lookup.result["pid"] > 0  # the server was up and answered
    error = run.trials[0].trial.error
    assert error is not None and "the model refused" in error.message
    assert server_pids() == []


async def test_a_trial_timed_out_inside_an_mcp_call_stops_its_server(tmp_path: Path) -> None:
    hanging = config_from_data(
        {
            "criteria": {"completes": 1.0},
            "mcp_servers": [
                {"name": "orders", "command": server_command(), "env": {"MCP_ORDERS_HANG": "1"}}
            ],
        }
    )
    with ScriptedOpenAIServer(handler=refund_model) as server:
        run = await evaluate(
            litellm_agent(server),
            evalset(),
            hanging,
            runs=1,
            trial_timeout_s=8,
            output_dir=tmp_path,
        )
    error = run.trials[0].trial.error
    assert error is not None and error.kind == "timeout"
    assert server_pids() == []


async def test_a_cancelled_run_stops_the_servers_it_started(tmp_path: Path) -> None:
    """What Ctrl-C does to a run: its coroutine is cancelled, mid-call here."""
    hanging = config_from_data(
        {
            "criteria": {"completes": 1.0},
            "mcp_servers": [
                {"name": "orders", "command": server_command(), "env": {"MCP_ORDERS_HANG": "1"}}
            ],
        }
    )
    with ScriptedOpenAIServer(handler=refund_model) as server:
        run = asyncio.ensure_future(
            evaluate(litellm_agent(server), evalset(), hanging, runs=2, output_dir=tmp_path)
        )
        for _ in range(300):  # both trials' servers up and the model's first calls made
            await asyncio.sleep(0.05)
            if len(server_pids()) == 2 and server.request_count >= 2:
                break
        assert len(server_pids()) == 2
        await asyncio.sleep(0.3)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    assert server_pids() == []


async def test_a_server_that_does_not_start_is_an_infrastructure_error(tmp_path: Path) -> None:
    broken = config_from_data(
        {
            "criteria": {"completes": 1.0},
            "mcp_servers": [
                {
                    "name": "broken",
                    "command": [server_command()[0], "-c", "raise SystemExit('no database')"],
                }
            ],
        }
    )
    with ScriptedOpenAIServer(handler=refund_model) as server:
        run = await evaluate(litellm_agent(server), evalset(), broken, runs=1, output_dir=tmp_path)
        assert server.request_count == 0  # the agent never ran
    error = run.trials[0].trial.error
    assert error is not None and error.kind == "infrastructure"
    assert "MCP server 'broken'" in error.message and "no database" in error.message


async def test_a_server_that_never_answers_is_cut_off_and_stopped(tmp_path: Path) -> None:
    silent = [server_command()[0], "-c", "import time; time.sleep(300)  # mcp-never-ready"]
    config = config_from_data(
        {
            "criteria": {"completes": 1.0},
            "mcp_servers": [{"name": "silent", "command": silent, "startup_timeout_s": 2}],
        }
    )
    with ScriptedOpenAIServer(handler=refund_model) as server:
        run = await evaluate(litellm_agent(server), evalset(), config, runs=1, output_dir=tmp_path)
    error = run.trials[0].trial.error
    assert error is not None and error.kind == "infrastructure"
    assert "did not start and list its tools within 2 s" in error.message
    assert server_pids("mcp-never-ready") == []


# ------------------------------------------------------------------ framework adapters


def sdk_agent(server: ScriptedOpenAIServer) -> AgentUnderTest:
    from agents import Agent, OpenAIChatCompletionsModel, set_tracing_disabled
    from openai import AsyncOpenAI

    from agentflow_eval.agents.frameworks import wrap

    set_tracing_disabled(True)  # the SDK's traces would go to OpenAI's platform
    client = AsyncOpenAI(base_url=server.url, api_key="test-key", max_retries=0)
    agent = Agent(
        name="desk",
        instructions="Refund what the customer asks for.",
        model=OpenAIChatCompletionsModel(model="scripted", openai_client=client),
    )
    return wrap(agent, name="desk")


def adk_agent(server: ScriptedOpenAIServer) -> AgentUnderTest:
    from google.adk.agents import LlmAgent
    from google.adk.models.lite_llm import LiteLlm

    from agentflow_eval.agents.frameworks import wrap

    model = LiteLlm(model="openai/scripted", api_base=server.url, api_key="scripted-key")
    agent = LlmAgent(name="desk", model=model, instruction="Refund what the customer asks for.")
    return wrap(agent, name="desk")


def pydantic_ai_agent(server: ScriptedOpenAIServer) -> AgentUnderTest:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from agentflow_eval.agents.frameworks import wrap

    provider = OpenAIProvider(base_url=server.url, api_key="scripted-key")
    agent = Agent(
        OpenAIChatModel("scripted", provider=provider),
        name="desk",
        instructions="Refund what the customer asks for.",
    )
    return wrap(agent, name="desk")


FRAMEWORKS = [
    pytest.param(sdk_agent, "agents", id="openai-agents"),
    pytest.param(adk_agent, "google.adk", id="adk"),
]
"""The adapters that take tool mocks, and MCP servers."""

MCP_ONLY = [pytest.param(pydantic_ai_agent, "pydantic_ai", id="pydantic-ai")]
"""An adapter that takes MCP servers but no tool mocks yet (a case with them is refused)."""


def value(result: Any) -> Any:
    """A recorded result as data: the SDK records a tool's output as the text the model
    got; ADK records its function response, a plain value wrapped as ``{"result": ...}``."""
    if isinstance(result, str):
        try:
            return json.loads(result)
        except ValueError:
            return result
    if isinstance(result, dict) and set(result) == {"result"}:
        return result["result"]
    return result


@pytest.mark.parametrize(("make_agent", "package"), [*FRAMEWORKS, *MCP_ONLY])
async def test_a_framework_agent_calls_the_trials_server(
    tmp_path: Path, make_agent: Any, package: str
) -> None:
    pytest.importorskip(package)
    with ScriptedOpenAIServer(handler=refund_model) as server:
        run = await evaluate(
            make_agent(server), evalset(), mcp_config(), runs=2, output_dir=tmp_path
        )
        offered = {tool["function"]["name"] for tool in server.requests[0]["tools"]}
    assert offered == {"lookup_order", "refund_order"}
    each_trial_refunded_on_its_own_server(run, answers=False)
    assert server_pids() == []


@pytest.mark.parametrize(("make_agent", "package"), FRAMEWORKS)
async def test_a_tool_mock_answers_for_a_framework_agents_mcp_tool(
    tmp_path: Path, make_agent: Any, package: str
) -> None:
    pytest.importorskip(package)
    config = mcp_config(tool_mocks=[{"tool": "lookup_order", "result": MOCKED_LOOKUP}])
    with ScriptedOpenAIServer(handler=refund_model) as server:
        run = await evaluate(make_agent(server), evalset(), config, runs=1, output_dir=tmp_path)
        sent = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    lookup, refund = calls(run)
    assert (lookup.served_by, value(lookup.result)) == ("mock", MOCKED_LOOKUP)
    assert (refund.served_by, value(refund.result)) == ("tool", "refunded A-1: 42.0")
    assert "lost in transit" in sent[0]  # the model saw the mock's answer
    assert server_pids() == []


@pytest.mark.parametrize(("make_agent", "package"), [*FRAMEWORKS, *MCP_ONLY])
async def test_a_server_error_is_a_framework_calls_error(
    tmp_path: Path, make_agent: Any, package: str
) -> None:
    pytest.importorskip(package)

    def unknown_order(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply.text("no such order")
        return Reply.tools(("lookup_order", {"order_id": "Z-9"}))

    with ScriptedOpenAIServer(handler=unknown_order) as server:
        run = await evaluate(
            make_agent(server), evalset(), mcp_config(), runs=1, output_dir=tmp_path
        )
    [lookup] = calls(run)
    assert lookup.error is not None and "Error executing tool lookup_order" in lookup.error
    assert run.trials[0].trial.error is None  # the model was told; the run went on
    assert run.trials[0].trial.turns[0].final_response == "no such order"


AGENT_FILE = """\
import os

from agentflow_eval import LiteLLMAgent

agent = LiteLLMAgent(
    "openai/scripted", api_base=os.environ["SCRIPTED_URL"], api_key="test", name="desk"
)
"""


def test_ctrl_c_stops_the_servers_of_the_running_trials(tmp_path: Path) -> None:
    """The user presses Ctrl-C while two trials wait on their servers' calls: the command
    stops, and takes the servers with it."""
    (tmp_path / "desk_agent.py").write_text(AGENT_FILE)
    (tmp_path / "desk.evalset.json").write_text(evalset().model_dump_json())
    config = {
        "criteria": {"completes": 1.0},
        "mcp_servers": [
            {"name": "orders", "command": server_command(), "env": {"MCP_ORDERS_HANG": "1"}}
        ],
    }
    (tmp_path / "mcp.config.json").write_text(json.dumps(config))
    with ScriptedOpenAIServer(handler=refund_model) as server:
        env = {**os.environ, "SCRIPTED_URL": server.url, "PREFECT_HOME": str(tmp_path / "p")}
        command = [
            str(Path(sys.executable).parent / "agentflow-eval"),
            "run",
            "desk_agent.py:agent",
            "desk.evalset.json",
            "--config",
            "mcp.config.json",
            "--runs",
            "2",
            "--no-prefect",
        ]
        process = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            deadline = time.monotonic() + 120
            while not (len(server_pids()) == 2 and server.request_count >= 2):
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
            time.sleep(0.5)  # the calls are made, and hang
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 130, err.decode()[-2000:]
    assert server_pids() == []


# ------------------------------------------------------------------ LangGraph graph factories

LANGGRAPH_FILE = """\
import os

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent

model = ChatOpenAI(
    model="scripted", base_url=os.environ["SCRIPTED_URL"], api_key="test", max_retries=0
)


@tool
def opening_hours() -> str:
    \"\"\"When the desk is open.\"\"\"
    return "9-17"


def build(tools):
    return create_react_agent(model, [opening_hours, *tools], name="desk")


graph = build([])
"""
"""A graph factory, and the plain graph it builds without MCP tools, in a file named by
an agent spec as a user names theirs."""


def langgraph_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: ScriptedOpenAIServer, attr: str
) -> AgentUnderTest:
    pytest.importorskip("langgraph")
    pytest.importorskip("langchain_openai")
    from agentflow_eval.agents.loader import load_agent

    monkeypatch.setenv("SCRIPTED_URL", server.url)
    # a file of its own per test (modules are kept by path): built with this test's server
    path = tmp_path / "desk_graph.py"
    path.write_text(LANGGRAPH_FILE)
    return load_agent(f"{path}:{attr}")


async def test_a_langgraph_factory_builds_each_trials_graph_with_its_mcp_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedOpenAIServer(handler=refund_model) as server:
        agent = langgraph_agent(tmp_path, monkeypatch, server, "build")
        run = await evaluate(agent, evalset(), mcp_config(), runs=2, output_dir=tmp_path)
        offered = {tool["function"]["name"] for tool in server.requests[0]["tools"]}
        schema = next(
            tool["function"]["parameters"]
            for tool in server.requests[0]["tools"]
            if tool["function"]["name"] == "refund_order"
        )
    # the graph's own tool beside the server's, which the model sees as the server wrote it
    assert offered == {"opening_hours", "lookup_order", "refund_order"}
    assert set(schema["required"]) == {"order_id", "reason"}
    each_trial_refunded_on_its_own_server(run)
    assert server_pids() == []


async def test_a_tool_mock_answers_for_a_langgraph_factorys_mcp_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = mcp_config(tool_mocks=[{"tool": "lookup_order", "result": MOCKED_LOOKUP}])
    with ScriptedOpenAIServer(handler=refund_model) as server:
        agent = langgraph_agent(tmp_path, monkeypatch, server, "build")
        run = await evaluate(agent, evalset(), config, runs=1, output_dir=tmp_path)
        sent = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    lookup, refund = calls(run)
    assert (lookup.served_by, lookup.result) == ("mock", MOCKED_LOOKUP)
    assert (refund.served_by, refund.result) == ("tool", "refunded A-1: 42.0")
    assert json.loads(sent[0]) == MOCKED_LOOKUP  # the model saw the mock's answer
    assert server_pids() == []


async def test_a_server_error_is_a_langgraph_calls_error_the_model_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unknown_order(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply.text("no such order")
        return Reply.tools(("lookup_order", {"order_id": "Z-9"}))

    with ScriptedOpenAIServer(handler=unknown_order) as server:
        agent = langgraph_agent(tmp_path, monkeypatch, server, "build")
        run = await evaluate(agent, evalset(), mcp_config(), runs=1, output_dir=tmp_path)
        told = server.requests[-1]["messages"][-1]["content"]
    [lookup] = calls(run)
    assert lookup.error is not None and "Error executing tool lookup_order" in lookup.error
    assert "Error executing tool lookup_order" in told
    assert run.trials[0].trial.error is None  # the model was told; the run went on
    assert run.trials[0].trial.turns[0].final_response == "no such order"
    assert server_pids() == []


async def test_a_langgraph_factory_runs_its_plain_graph_without_mcp_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def hours(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply.text(f"open {body['messages'][-1]['content']}")
        return Reply.tools(("opening_hours", {}))

    with ScriptedOpenAIServer(handler=hours) as server:
        agent = langgraph_agent(tmp_path, monkeypatch, server, "build")
        config = config_from_data({"criteria": {"completes": 1.0}})
        run = await evaluate(agent, evalset(), config, runs=1, output_dir=tmp_path)
        offered = {tool["function"]["name"] for tool in server.requests[0]["tools"]}
    assert offered == {"opening_hours"}
    [call] = calls(run)
    assert (call.name, call.result) == ("opening_hours", "9-17")
    assert run.trials[0].trial.turns[0].final_response == "open 9-17"


def test_a_compiled_langgraph_graph_with_mcp_servers_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.cli_in_process import run_cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "desk.evalset.json").write_text(evalset().model_dump_json())
    config = {
        "criteria": {"completes": 1.0},
        "mcp_servers": [{"name": "orders", "command": server_command()}],
    }
    (tmp_path / "mcp.config.json").write_text(json.dumps(config))
    with ScriptedOpenAIServer(handler=refund_model) as server:
        langgraph_agent(tmp_path, monkeypatch, server, "graph")  # writes desk_graph.py
        result = run_cli(
            capsys,
            "run",
            "desk_graph.py:graph",
            "desk.evalset.json",
            "--config",
            "mcp.config.json",
            "--no-prefect",
        )
        assert server.request_count == 0  # the graph never ran
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "agentflow-eval: error: mcp.config.json: mcp_servers: agent 'desk' cannot be given "
        "MCP servers' tools; a compiled graph's tools are fixed when it is compiled: name a "
        "graph factory instead, a function build(tools) returning the graph built with them "
        "(create_react_agent(model, [*your_tools, *tools]))"
    ]
    assert server_pids() == []  # refused before any server was started
    assert not list(tmp_path.glob("*results*")), "no run folder for bad input"


async def test_an_mcp_tool_named_as_a_graphs_own_tool_fails_the_trial(tmp_path: Path) -> None:
    pytest.importorskip("langgraph")
    pytest.importorskip("langchain_openai")
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    from agentflow_eval.agents.frameworks.langgraph import wrap_factory

    @tool
    def lookup_order(order_id: str) -> str:
        """The graph's own lookup, which a ToolNode would silently swap for the server's."""
        return "mine"

    with ScriptedOpenAIServer(handler=refund_model) as server:
        model = ChatOpenAI(model="scripted", base_url=server.url, api_key="test", max_retries=0)
        agent = wrap_factory(
            lambda tools: create_react_agent(model, [lookup_order, *tools]), name="desk"
        )
        run = await evaluate(agent, evalset(), mcp_config(), runs=1, output_dir=tmp_path)
        assert server.request_count == 0
    error = run.trials[0].trial.error
    assert error is not None
    assert "MCP tool(s) 'lookup_order' have the name of one of graph 'desk''s own tools" in (
        error.message
    )
    assert server_pids() == []
