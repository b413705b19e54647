"""The LangGraph adapter, on real graphs (ChatOpenAI against the scripted OpenAI-compatible
server on 127.0.0.1), through the whole pipeline: what a turn records (node visits with
their subgraphs, model calls with their usage, tool calls with results and errors, in
order), conversations kept per trial, the trial timeout, provider faults, steps judged by
node_trajectory_avg_score, and the example agent on the weather eval set."""

from __future__ import annotations

import asyncio
import json
import operator
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain_openai")

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

from agentflow_eval.agents.frameworks import langgraph as adapter
from agentflow_eval.agents.loader import AgentLoadError, load_agent
from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.demo import install as install_demo
from agentflow_eval.files.loading import load_evalset
from agentflow_eval.llm.retry import ProviderAuthError
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import (
    ModelCallEvent,
    NodeEvent,
    RunResult,
    Trial,
)
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from examples.weather.agent import get_weather as weather_data

# one event loop for the module, as in one run: ChatOpenAI shares an HTTP client (and its
# kept-alive connections) between instances with the same base URL, across event loops
pytestmark = pytest.mark.asyncio(loop_scope="module")

REPO = Path(__file__).resolve().parents[2]
WEATHER = {"paris": ("rainy", 61), "tokyo": ("sunny", 75), "london": ("cloudy", 55)}
FAIL = {"on": False}


@tool
def get_weather(location: str) -> dict[str, Any]:
    """Get the current weather for a city."""
    if FAIL["on"]:
        raise RuntimeError("weather service down")
    condition, temperature = WEATHER[location.lower()]
    return {"location": location, "condition": condition, "temperature": temperature}


class State(MessagesState):
    route: str
    visits: int


def weather_graph(url: str, *, max_retries: int = 0, handle_tool_errors: Any = None) -> Any:
    """router → agent ⇄ tools → summary (a subgraph: summarize) → END."""
    llm = ChatOpenAI(model="scripted", base_url=url, api_key="test", max_retries=max_retries)
    llm_with_tools = llm.bind_tools([get_weather])

    def router(state: State) -> dict[str, Any]:
        return {"route": "weather", "visits": state.get("visits", 0) + 1}

    async def agent(state: State) -> dict[str, Any]:
        return {"messages": [await llm_with_tools.ainvoke(state["messages"])]}

    async def summarize(state: MessagesState) -> dict[str, Any]:
        ask = HumanMessage("Summarize in one line.")
        return {"messages": [await llm.ainvoke([*state["messages"], ask])]}

    summary = StateGraph(MessagesState)
    summary.add_node("summarize", summarize)
    summary.add_edge(START, "summarize")
    summary.add_edge("summarize", END)

    tools = (
        ToolNode([get_weather])
        if handle_tool_errors is None
        else ToolNode([get_weather], handle_tool_errors=handle_tool_errors)
    )
    graph = StateGraph(State)
    graph.add_node("router", router)
    graph.add_node("agent", agent)
    graph.add_node("tools", tools)
    graph.add_node("summary", summary.compile())
    graph.add_edge(START, "router")
    graph.add_edge("router", "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "summary"})
    graph.add_edge("tools", "agent")
    graph.add_edge("summary", END)
    return graph.compile()


def weather_model(body: dict[str, Any]) -> Reply:
    """The model behind the graph: look the city up, answer from the tool's result, then
    summarise when asked (without tools). Token counts differ per kind of call."""
    messages = body["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        report = json.loads(last["content"])
        return Reply.text(
            f"It is {report['condition']} in {report['location']}.",
            prompt_tokens=30,
            completion_tokens=8,
        )
    if "tools" not in body:
        answers = [m["content"] for m in messages if m["role"] == "assistant" and m["content"]]
        return Reply.text(f"Summary: {answers[-1]}", prompt_tokens=40, completion_tokens=6)
    city = next(c for c in ("Paris", "Tokyo", "London") if c in last["content"])
    return Reply.tools(("get_weather", {"location": city}), prompt_tokens=20, completion_tokens=4)


@pytest.fixture(autouse=True)
def tool_works() -> Any:
    FAIL["on"] = False
    yield
    FAIL["on"] = False


@pytest.fixture
def weather_server(server: ScriptedOpenAIServer) -> ScriptedOpenAIServer:
    server.handler = weather_model
    return server


def evalset(*cases: dict[str, Any]) -> EvalSet:
    return EvalSet.model_validate({"eval_set_id": "lg", "eval_cases": list(cases)})


def config(**criteria: dict[str, Any] | float) -> EvalConfig:
    return EvalConfig(
        criteria={name: CriterionConfig.model_validate(c) for name, c in criteria.items()}
    )


def only_trial(run: RunResult) -> Trial:
    [result] = run.trials
    return result.trial


def kinds(trial: Trial, turn: int = 0) -> list[str]:
    """A turn's events as ``kind:author`` (nodes as their path), in order."""
    out = []
    for event in trial.turns[turn].events:
        if isinstance(event, NodeEvent):
            out.append("node:" + "/".join([*event.path, event.name]))
        else:
            out.append(f"{event.kind}:{event.author}")
    return out


async def test_a_turn_records_nodes_model_calls_and_tools_in_order(
    weather_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    agent = adapter.wrap(weather_graph(weather_server.url), name="weather_graph")
    run = await evaluate(
        agent,
        evalset(
            {
                "eval_id": "paris",
                "conversation": [
                    {
                        "user_content": "What's the weather in Paris?",
                        "expected_tool_trajectory": [
                            {"name": "get_weather", "args": {"location": "Paris"}}
                        ],
                        "expected_final_response": "Summary: It is rainy in Paris.",
                    }
                ],
            }
        ),
        config(tool_trajectory_avg_score=1.0, response_match_score=0.9),
        runs=1,
        output_dir=tmp_path,
    )
    trial = only_trial(run)
    assert trial.error is None and run.trials[0].status == "passed"
    assert kinds(trial) == [
        "node:router",
        "node:agent",
        "model_call:agent",
        "tool_call:agent",
        "node:tools",
        "node:agent",
        "model_call:agent",
        "message:agent",  # the agent's answer: intermediate, the summary is the answer
        "node:summary",
        "node:summary/summarize",
        "model_call:summary/summarize",
        "message:None",  # the final answer, recorded by the trial
    ]
    turn = trial.turns[0]
    assert turn.final_response == "Summary: It is rainy in Paris."
    assert turn.intermediate_responses == ["It is rainy in Paris."]
    [call] = turn.tool_calls
    assert (call.name, call.args, call.error) == ("get_weather", {"location": "Paris"}, None)
    assert call.result == {"location": "Paris", "condition": "rainy", "temperature": 61}
    assert call.id and call.duration_ms > 0
    calls = [e for e in turn.events if isinstance(e, ModelCallEvent)]
    assert [(c.model, c.usage.prompt_tokens, c.usage.completion_tokens) for c in calls] == [
        ("scripted", 20, 4),
        ("scripted", 30, 8),
        ("scripted", 40, 6),
    ]
    assert all(c.usage.calls == 1 and c.usage.total_tokens for c in calls)
    assert turn.usage.prompt_tokens == 90 and turn.usage.completion_tokens == 18
    assert turn.usage.calls == 3
    stamps = [event.at_ms for event in turn.events]
    assert stamps == sorted(stamps) and stamps[0] > 0
    assert trial.final_session_state is not None
    assert trial.final_session_state["visits"] == 1
    assert [m["role"] for m in trial.final_session_state["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "assistant",
    ]
    assert trial.final_session_state["messages"][1]["tool_calls"] == [
        {"name": "get_weather", "args": {"location": "Paris"}}
    ]


async def test_a_conversation_keeps_its_thread_and_trials_do_not_share_one(
    weather_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    agent = adapter.wrap(weather_graph(weather_server.url), name="weather_graph")
    case = {
        "eval_id": "two_cities",
        "conversation": [
            {"user_content": "What's the weather in Paris?"},
            {"user_content": "And in Tokyo?"},
        ],
        "session_input": {"user_id": "u1", "state": {"visits": 40, "route": "seeded"}},
        "final_session_state": {"visits": 42, "route": "weather"},
    }
    run = await evaluate(
        agent,
        evalset(case),
        config(final_session_state_match={"threshold": 1.0, "state_match": "subset"}),
        runs=2,
        max_concurrency=2,
        output_dir=tmp_path,
    )
    assert [r.status for r in run.trials] == ["passed", "passed"]
    for result in run.trials:
        trial = result.trial
        assert trial.error is None
        assert [t.final_response for t in trial.turns] == [
            "Summary: It is rainy in Paris.",
            "Summary: It is sunny in Tokyo.",
        ]
        assert trial.turns[1].tool_calls[0].args == {"location": "Tokyo"}
        state = trial.final_session_state
        assert state is not None and state["visits"] == 42  # seeded 40, +1 per turn: no leak
        assert [m["content"] for m in state["messages"] if m["role"] == "user"] == [
            "What's the weather in Paris?",
            "And in Tokyo?",
        ]
        assert len(state["messages"]) == 10
    # the second turn's first model call carries the whole first turn
    second_turn_asks = [
        body
        for body in weather_server.requests
        if body["messages"][-1] == {"role": "user", "content": "And in Tokyo?"}
    ]
    assert len(second_turn_asks) == 2  # one per trial
    for body in second_turn_asks:
        assert [m["role"] for m in body["messages"]] == [
            "user",
            "assistant",
            "tool",
            "assistant",
            "assistant",
            "user",
        ]
        assert body["messages"][0]["content"] == "What's the weather in Paris?"
        assert body["messages"][4]["content"] == "Summary: It is rainy in Paris."
    # and the second turn's events hold only what the second turn did
    trial = run.trials[0].trial
    assert kinds(trial, 1)[:4] == [
        "node:router",
        "node:agent",
        "model_call:agent",
        "tool_call:agent",
    ]
    assert len([e for e in trial.turns[1].events if isinstance(e, ModelCallEvent)]) == 3


async def test_session_input_state_the_graph_does_not_take_is_refused(
    weather_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    agent = adapter.wrap(weather_graph(weather_server.url), name="weather_graph")
    run = await evaluate(
        agent,
        evalset(
            {
                "eval_id": "bad_seed",
                "conversation": [{"user_content": "What's the weather in Paris?"}],
                "session_input": {"state": {"mood": "happy"}},
            }
        ),
        config(response_match_score=0.5),
        runs=1,
        output_dir=tmp_path,
    )
    error = only_trial(run).error
    assert error is not None and error.kind == "exception"
    assert "mood" in error.message and "messages, route, visits" in error.message
    assert weather_server.requests == []


async def test_a_file_spec_loads_the_graph(
    weather_server: ScriptedOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "my_graph.py"
    source.write_text(
        "import os\n"
        "from langchain_openai import ChatOpenAI\n"
        "from langgraph.graph import START, END, MessagesState, StateGraph\n"
        "llm = ChatOpenAI(model='scripted', base_url=os.environ['LG_TEST_URL'], api_key='t',"
        " max_retries=0)\n"
        "async def chat(state):\n"
        "    return {'messages': [await llm.ainvoke(state['messages'])]}\n"
        "builder = StateGraph(MessagesState)\n"
        "builder.add_node('chat', chat)\n"
        "builder.add_edge(START, 'chat')\n"
        "builder.add_edge('chat', END)\n"
        "graph = builder.compile()\n"
    )
    monkeypatch.setenv("LG_TEST_URL", weather_server.url)
    weather_server.handler = lambda body: Reply.text("hello " + body["messages"][-1]["content"])
    agent = load_agent(f"{source}:graph")
    assert isinstance(agent, adapter.LangGraphAgent) and agent.name == "graph"
    builder_agent = load_agent(f"{source}:builder")  # an uncompiled StateGraph is compiled
    assert isinstance(builder_agent, adapter.LangGraphAgent)
    with pytest.raises(AgentLoadError, match="--model only applies"):
        load_agent(f"{source}:graph", model="openai/gpt-4o-mini")
    run = await evaluate(
        agent,
        evalset(
            {
                "eval_id": "hi",
                "conversation": [
                    {"user_content": "there", "expected_final_response": "hello there"}
                ],
            }
        ),
        config(response_match_score=1.0),
        runs=1,
        output_dir=tmp_path / "runs",
    )
    trial = only_trial(run)
    assert run.trials[0].status == "passed"
    assert kinds(trial) == ["node:chat", "model_call:chat", "message:None"]


async def test_a_graph_without_messages_is_refused_at_load() -> None:
    class Counter(TypedDict):
        count: Annotated[int, operator.add]

    builder = StateGraph(Counter)
    builder.add_node("step", lambda state: {"count": 1})
    builder.add_edge(START, "step")
    with pytest.raises(ValueError, match=r"no 'messages' key .* supported are graphs"):
        adapter.wrap(builder.compile(), name="counter")
    with pytest.raises(TypeError, match="not a graph"):
        adapter.wrap(ToolNode([get_weather]), name="tools")


async def test_a_tool_error_sent_to_the_model_is_recorded_and_the_run_goes_on(
    weather_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    FAIL["on"] = True
    answers = iter([Reply.text("No weather data for Paris, sorry."), Reply.text("Summary: none.")])

    def model(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "user" and "Paris" in body["messages"][-1]["content"]:
            return weather_model(body)
        return next(answers)

    weather_server.handler = model
    graph = weather_graph(weather_server.url, handle_tool_errors=True)
    run = await evaluate(
        adapter.wrap(graph, name="weather_graph"),
        evalset({"eval_id": "down", "conversation": [{"user_content": "Weather in Paris?"}]}),
        config(response_match_score=0.1),
        runs=1,
        output_dir=tmp_path,
    )
    trial = only_trial(run)
    assert trial.error is None
    [call] = trial.turns[0].tool_calls
    assert call.name == "get_weather" and call.result is None
    assert call.error is not None and "RuntimeError('weather service down')" in call.error
    tool_reply = weather_server.requests[1]["messages"][-1]
    assert tool_reply["role"] == "tool" and "weather service down" in tool_reply["content"]
    assert trial.turns[0].final_response == "Summary: none."


async def test_a_tool_that_raises_fails_the_trial_with_the_call_recorded(
    weather_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    FAIL["on"] = True
    run = await evaluate(
        adapter.wrap(weather_graph(weather_server.url), name="weather_graph"),
        evalset({"eval_id": "down", "conversation": [{"user_content": "Weather in Paris?"}]}),
        config(response_match_score=0.1),
        runs=1,
        output_dir=tmp_path,
    )
    trial = only_trial(run)
    assert trial.error is not None
    assert (trial.error.kind, trial.error.type) == ("exception", "RuntimeError")
    assert trial.error.message == "weather service down"
    [call] = trial.turns[0].tool_calls
    assert call.args == {"location": "Paris"} and call.result is None
    assert call.error == "RuntimeError: weather service down (in node tools)"
    assert kinds(trial) == [
        "node:router",
        "node:agent",
        "model_call:agent",
        "tool_call:agent",
        "node:tools",
    ]


async def test_a_hung_model_call_is_stopped_by_the_trial_timeout(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.handler = lambda body: Reply.text("too late", delay_s=5)
    started = time.perf_counter()
    run = await evaluate(
        adapter.wrap(weather_graph(server.url), name="weather_graph"),
        evalset({"eval_id": "slow", "conversation": [{"user_content": "Weather in Paris?"}]}),
        config(response_match_score=0.1),
        runs=1,
        trial_timeout_s=0.5,
        output_dir=tmp_path,
    )
    elapsed = time.perf_counter() - started
    trial = only_trial(run)
    assert trial.error is not None and trial.error.kind == "timeout"
    assert trial.duration_ms < 1500 and elapsed < 4
    assert kinds(trial) == ["node:router", "node:agent"]  # it was in the agent when stopped


async def test_a_tool_call_cut_short_by_the_timeout_says_so(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    @tool
    async def slow_weather(location: str) -> str:
        """Weather, slowly."""
        await asyncio.sleep(5)
        return "rainy"

    server.handler = lambda body: Reply.tools(("slow_weather", {"location": "Paris"}))
    llm = ChatOpenAI(model="scripted", base_url=server.url, api_key="t", max_retries=0)
    llm_tools = llm.bind_tools([slow_weather])

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await llm_tools.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([slow_weather]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    started = time.perf_counter()
    run = await evaluate(
        adapter.wrap(builder.compile(), name="slow"),
        evalset({"eval_id": "slow_tool", "conversation": [{"user_content": "Paris?"}]}),
        config(response_match_score=0.1),
        runs=1,
        trial_timeout_s=0.5,
        output_dir=tmp_path,
    )
    trial = only_trial(run)
    assert trial.error is not None and trial.error.kind == "timeout"
    assert time.perf_counter() - started < 4
    [call] = trial.turns[0].tool_calls
    assert call.args == {"location": "Paris"} and call.result is None
    assert call.error == "no result: the turn was cancelled while it ran"
    assert kinds(trial) == ["node:agent", "model_call:agent", "tool_call:agent", "node:tools"]


async def test_rate_limits_past_chatopenai_retries_are_infrastructure_errors(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    def model(body: dict[str, Any]) -> Reply:
        if "busy" in body["messages"][0]["content"]:
            return Reply.error(429, "rate limited", headers={"retry-after-ms": "1"})
        return Reply.text("the answer is 42")

    server.handler = model
    llm = ChatOpenAI(model="scripted", base_url=server.url, api_key="t", max_retries=1)

    async def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await llm.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    run = await evaluate(
        adapter.wrap(builder.compile(), name="chat"),
        evalset(
            {
                "eval_id": "busy",
                "conversation": [
                    {"user_content": "busy?", "expected_final_response": "the answer is 42"}
                ],
            },
            {
                "eval_id": "calm",
                "conversation": [
                    {"user_content": "calm?", "expected_final_response": "the answer is 42"}
                ],
            },
        ),
        config(response_match_score=1.0),
        runs=2,
        output_dir=tmp_path,
    )
    by_case = {(r.trial.case_id, r.trial.trial_index): r for r in run.trials}
    for index in range(2):
        busy = by_case["busy", index].trial
        assert busy.error is not None and busy.error.kind == "infrastructure"
        assert "HTTP 429" in busy.error.message
        assert by_case["calm", index].status == "passed"
    assert run.totals.infrastructure_errors == 2
    assert run.totals.rated_trials == 2 and run.totals.passed == 2
    assert run.totals.pass_rate == 1.0  # the rate limits are not the agent's failures
    busy_requests = [b for b in server.requests if b["messages"][0]["content"] == "busy?"]
    assert len(busy_requests) == 4  # ChatOpenAI's own retry (max_retries=1), per trial


async def test_refused_credentials_stop_the_run(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.handler = lambda body: Reply.error(401, "invalid api key")
    with pytest.raises(ProviderAuthError, match="authentication failed"):
        await evaluate(
            adapter.wrap(weather_graph(server.url), name="weather_graph"),
            evalset({"eval_id": "key", "conversation": [{"user_content": "Weather in Paris?"}]}),
            config(response_match_score=0.1),
            runs=2,
            max_concurrency=1,
            output_dir=tmp_path,
        )


async def test_a_prebuilt_react_agent_is_evaluated_too(
    weather_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    from langgraph.prebuilt import create_react_agent

    llm = ChatOpenAI(model="scripted", base_url=weather_server.url, api_key="t", max_retries=0)
    react = create_react_agent(llm, [get_weather], name="react_weather")
    run = await evaluate(
        adapter.wrap(react, name="react"),
        evalset(
            {
                "eval_id": "tokyo",
                "conversation": [
                    {"user_content": "Weather in Tokyo?", "expected_nodes": ["agent", "tools"]}
                ],
            }
        ),
        config(node_trajectory_avg_score={"threshold": 1.0, "match_type": "IN_ORDER"}),
        runs=1,
        output_dir=tmp_path,
    )
    result = run.trials[0]
    assert result.status == "passed" and run.agent == "react_weather"
    trial = result.trial
    assert trial.turns[0].final_response == "It is sunny in Tokyo."
    assert kinds(trial)[:5] == [
        "node:agent",
        "model_call:agent",
        "tool_call:agent",
        "node:tools",
        "node:agent",
    ]
    [call] = trial.turns[0].tool_calls
    assert call.result == {"location": "Tokyo", "condition": "sunny", "temperature": 75}
    # its output is only the messages: the state is read from the thread's checkpoint
    state = trial.final_session_state
    assert state is not None
    assert [m["role"] for m in state["messages"]] == ["user", "assistant", "tool", "assistant"]


async def test_steps_are_judged_by_node_trajectory(
    weather_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    def case(eval_id: str, nodes: list[str]) -> dict[str, Any]:
        return {
            "eval_id": eval_id,
            "conversation": [{"user_content": "Weather in London?", "expected_nodes": nodes}],
        }

    cases = [
        case("exact", ["router", "agent", "tools", "agent", "summary", "summary/summarize"]),
        case("wrong", ["router", "summary/summarize", "tools"]),
    ]
    for match_type in ("EXACT", "IN_ORDER"):
        run = await evaluate(
            adapter.wrap(weather_graph(weather_server.url), name="weather_graph"),
            evalset(*cases, case("subset", ["router", "tools", "summary/summarize"])),
            config(node_trajectory_avg_score={"threshold": 1.0, "match_type": match_type}),
            runs=1,
            output_dir=tmp_path / match_type,
        )
        results = {r.trial.case_id: r for r in run.trials}
        scores = {}
        for case_id, result in results.items():
            [criterion] = result.criteria
            scores[case_id] = criterion.score
            assert criterion.details["invocations"][0]["actual"] == [
                "router",
                "agent",
                "tools",
                "agent",
                "summary",
                "summary/summarize",
            ]
        assert scores["exact"] == 1.0
        assert scores["wrong"] is not None and scores["wrong"] < 1.0
        assert (scores["subset"] == 1.0) is (match_type == "IN_ORDER")


async def test_running_out_of_steps_is_max_steps(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.handler = lambda body: Reply.tools(("get_weather", {"location": "Paris"}))
    graph = weather_graph(server.url).with_config(recursion_limit=5)
    run = await evaluate(
        adapter.wrap(graph, name="looping"),
        evalset({"eval_id": "loop", "conversation": [{"user_content": "Weather in Paris?"}]}),
        config(response_match_score=0.1),
        runs=1,
        output_dir=tmp_path,
    )
    trial = only_trial(run)
    assert trial.error is not None and trial.error.kind == "max_steps"
    assert trial.error.message == "no final answer within 5 steps"
    assert len(trial.turns[0].tool_calls) == 2  # router, agent, tools, agent, tools: 5 steps


async def test_an_interrupt_for_human_input_fails_the_trial_clearly(tmp_path: Path) -> None:
    def ask(state: MessagesState) -> dict[str, Any]:
        return {"messages": [("ai", str(interrupt("approve?")))]}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    run = await evaluate(
        adapter.wrap(builder.compile(), name="asks"),
        evalset({"eval_id": "hitl", "conversation": [{"user_content": "go"}]}),
        config(response_match_score=0.1),
        runs=1,
        output_dir=tmp_path,
    )
    error = only_trial(run).error
    assert error is not None and error.type == "GraphInterrupted"
    assert "approve?" in error.message and "does not resume" in error.message


async def test_the_example_agent_runs_the_weather_eval_set(tmp_path: Path) -> None:
    install_demo()  # the eval config's judge model, as the front doors install it
    agent = load_agent("examples.langgraph_weather")
    assert isinstance(agent, adapter.LangGraphAgent)
    eval_set = load_evalset(REPO / "examples/weather/weather.evalset.json").eval_set
    run = await evaluate(
        agent,
        eval_set,
        load_config(REPO / "examples/weather/eval_config.json"),
        runs=2,
        output_dir=tmp_path,
    )
    assert len(run.trials) == 2 * len(eval_set.eval_cases)
    expected = {
        case.eval_id: [
            [call.args["location"] for call in invocation.expected_tool_trajectory]
            for invocation in case.conversation
        ]
        for case in eval_set.eval_cases
    }
    complete: set[str] = set()
    for result in run.trials:
        trial = result.trial
        assert trial.error is None, trial.error
        for turn, cities in zip(trial.turns, expected[trial.case_id], strict=True):
            called = [call.args["location"] for call in turn.tool_calls]
            # the demo model, like a real one, sometimes swaps or skips a city
            assert called and set(called) <= set(cities), (trial.case_id, called)
            assert all(call.name == "get_weather" for call in turn.tool_calls)
            for call in turn.tool_calls:
                assert call.result == weather_data(call.args["location"])
            assert [e.author for e in turn.events if isinstance(e, ModelCallEvent)] == [
                "agent",
                "agent",
            ]
            if sorted(called) == sorted(cities):
                complete.add(trial.case_id)
        assert "tool_trajectory_avg_score" in {c.criterion for c in result.criteria}
    assert complete == set(expected)  # each case's cities were all looked up in some trial


# -- tool mocks and seeded history -------------------------------------------------------


async def test_mocks_answer_in_the_tool_nodes_hook_and_the_tool_never_runs(
    weather_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    FAIL["on"] = True  # the real tool would fail: only the mock can give this answer
    graph = weather_graph(weather_server.url)
    case = {
        "eval_id": "mocked",
        "conversation": [
            {
                "user_content": "What's the weather in Tokyo?",
                "expected_final_response": "Summary: It is snowy in Tokyo.",
            }
        ],
        "tool_mocks": [
            {
                "tool": "get_weather",
                "args": {"location": "Tokyo"},
                "result": {"location": "Tokyo", "condition": "snowy"},
            }
        ],
    }
    run = await evaluate(
        adapter.wrap(graph, name="weather_graph"),
        evalset(case),
        config(response_match_score=0.9),
        runs=2,
        output_dir=tmp_path,
    )
    assert [r.status for r in run.trials] == ["passed", "passed"]
    for result in run.trials:
        (call,) = result.trial.turns[0].tool_calls
        assert (call.served_by, call.result, call.error) == (
            "mock",
            {"location": "Tokyo", "condition": "snowy"},
            None,
        )
    # the same graph without mocks runs its tool again (the hook only passes calls on)
    FAIL["on"] = False
    plain = await evaluate(
        adapter.wrap(graph, name="weather_graph"),
        evalset({**case, "tool_mocks": [], "eval_id": "plain"}),
        config(response_match_score=0.1),
        runs=1,
        output_dir=tmp_path / "plain",
    )
    (call,) = only_trial(plain).turns[0].tool_calls
    assert call.served_by == "tool" and call.result["condition"] == "sunny"


async def test_an_injected_fault_is_the_tool_messages_error(
    weather_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    weather_server.handler = lambda body: (
        Reply.text("The weather service is down.")
        if body["messages"][-1]["role"] == "tool" or "tools" not in body
        else weather_model(body)
    )
    case = {
        "eval_id": "fault",
        "conversation": [{"user_content": "Weather in Paris?", "expected_final_response": "x"}],
        "tool_mocks": [
            {"tool": "get_weather", "result": {}, "fault": {"kind": "error", "probability": 1.0}}
        ],
    }
    run = await evaluate(
        adapter.wrap(weather_graph(weather_server.url), name="weather_graph"),
        evalset(case),
        config(response_match_score=0.1),
        runs=1,
        output_dir=tmp_path,
    )
    (call,) = only_trial(run).turns[0].tool_calls
    assert (call.served_by, call.error) == ("fault", "get_weather failed (injected fault)")
    tool_message = next(m for m in weather_server.requests[-2]["messages"] if m["role"] == "tool")
    assert tool_message["content"] == "Error: get_weather failed (injected fault)"


async def test_a_mocked_tool_called_outside_a_tool_node_fails_the_trial(
    weather_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    """A node that runs the tool in its own code: the mock could not answer, and the
    trial says so rather than pass on the real tool's result."""
    from langchain_core.messages import AIMessage, ToolMessage

    def own_tools(state: MessagesState) -> dict[str, Any]:
        call = {"name": "get_weather", "args": {"location": "Paris"}, "id": "c1"}
        result = get_weather.invoke(call["args"])
        return {
            "messages": [
                AIMessage("", tool_calls=[call]),
                ToolMessage(json.dumps(result), tool_call_id="c1", name="get_weather"),
                AIMessage("Rainy."),
            ]
        }

    builder = StateGraph(MessagesState)
    builder.add_node("own_tools", own_tools)
    builder.add_edge(START, "own_tools")
    builder.add_edge("own_tools", END)
    case = {
        "eval_id": "bypass",
        "conversation": [{"user_content": "Paris?", "expected_final_response": "Rainy."}],
        "tool_mocks": [{"tool": "get_weather", "result": {"condition": "mocked"}}],
    }
    run = await evaluate(
        adapter.wrap(builder.compile(), name="own"),
        evalset(case),
        config(response_match_score=0.5),
        runs=1,
        output_dir=tmp_path,
    )
    trial = only_trial(run)
    assert trial.error is not None and trial.error.type == "MockNotReached"
    assert "runs them in a ToolNode" in trial.error.message


async def test_a_seeded_history_starts_the_thread(
    weather_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    case = {
        "eval_id": "next",
        "history": [
            {"role": "user", "content": "Hi, I am planning a trip."},
            {"role": "assistant", "content": "Where to?"},
        ],
        "conversation": [
            {"user_content": "What's the weather in London?", "expected_final_response": "x"}
        ],
    }
    await evaluate(
        adapter.wrap(weather_graph(weather_server.url), name="weather_graph"),
        evalset(case),
        config(response_match_score=0.1),
        runs=1,
        output_dir=tmp_path,
    )
    first = weather_server.requests[0]["messages"]
    assert [(m["role"], m["content"]) for m in first] == [
        ("user", "Hi, I am planning a trip."),
        ("assistant", "Where to?"),
        ("user", "What's the weather in London?"),
    ]
