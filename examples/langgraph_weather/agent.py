"""The weather agent of ``examples/weather``, written the LangGraph way: a ``StateGraph``
over ``MessagesState`` whose ``agent`` node asks a ``ChatOpenAI`` model (with the
``get_weather`` tool bound) and whose ``tools`` node (LangGraph's ``ToolNode``) runs the
calls it asks for, looping until the model answers.

Evaluate it with::

    agentflow-eval run examples.langgraph_weather examples/weather/weather.evalset.json \\
        --config examples/weather/eval_config.json

Its model is the offline demo model behind an OpenAI-compatible URL on 127.0.0.1 (started
in this process on first import), unless ``AGENTFLOW_EXAMPLE_BASE_URL`` names a real
endpoint: then ``AGENTFLOW_EXAMPLE_MODEL`` is the model (default ``gpt-4o-mini``) and the
key comes from ``AGENTFLOW_EXAMPLE_API_KEY``, else ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from langchain_core.messages import SystemMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from agentflow_eval.agents.base import current_session
from agentflow_eval.demo.server import shared_demo_url
from agentflow_eval.examples.weather.agent import SYSTEM_PROMPT, get_weather

__all__ = ["agent", "graph", "model"]


BASE_URL = os.environ.get("AGENTFLOW_EXAMPLE_BASE_URL")


def _chat_model() -> ChatOpenAI:
    base_url = BASE_URL
    if base_url:
        return ChatOpenAI(
            model=os.environ.get("AGENTFLOW_EXAMPLE_MODEL", "gpt-4o-mini"),
            base_url=base_url,
            api_key=os.environ.get("AGENTFLOW_EXAMPLE_API_KEY") or None,
            max_retries=2,
        )
    # the demo server answers whole completions only: ask for no token streaming
    return ChatOpenAI(
        model="weather", base_url=shared_demo_url(), api_key="offline", disable_streaming=True
    )


weather_tool = tool(get_weather)
model = _chat_model().bind_tools([weather_tool])


async def call_model(state: MessagesState) -> dict[str, Any]:
    """The agent's step: the system prompt and the conversation to the model."""
    reply = await model.ainvoke(
        [SystemMessage(SYSTEM_PROMPT), *state["messages"]], **_demo_sampling()
    )
    return {"messages": [reply]}


def _demo_sampling() -> dict[str, Any]:
    """A real model's answers vary from call to call; the demo model's vary only with the
    request's ``seed``. On the demo, seed each trial differently (and repeatably), so the
    trials of a case differ as they would on a real model."""
    session = current_session()
    if BASE_URL or session is None:
        return {}
    trial = f"{session.case_id}#{session.trial_index}".encode()
    return {"seed": int.from_bytes(hashlib.sha256(trial).digest()[:4], "big")}


builder = StateGraph(MessagesState)
builder.add_node("agent", call_model)
builder.add_node("tools", ToolNode([weather_tool]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)  # to "tools", or the end
builder.add_edge("tools", "agent")

graph = builder.compile(name="weather_agent")
agent = graph
"""The name agentflow-eval's module form looks for (``root_agent``, else ``agent``)."""
