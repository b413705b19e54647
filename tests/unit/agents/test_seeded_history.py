"""A case's seeded history is the conversation so far for every kind of agent: the
LiteLLM loop's messages start with it (after the system prompt), a Python agent's
``history`` does; an agent kind that cannot take one refuses the run before it starts."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

HISTORY = [
    {"role": "user", "content": "Flights to Paris?"},
    {"role": "assistant", "tool_calls": [{"id": "c1", "name": "search", "args": {"to": "Paris"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "AF123 at 9:00"},
    {"role": "assistant", "content": "AF123 leaves at 9:00. Book it?"},
]
WIRE = [
    {"role": "user", "content": "Flights to Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "search", "arguments": '{"to": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "AF123 at 9:00"},
    {"role": "assistant", "content": "AF123 leaves at 9:00. Book it?"},
]


def seeded_set(*turns: str) -> EvalSet:
    return EvalSet.model_validate(
        {
            "eval_set_id": "seeded",
            "eval_cases": [
                {
                    "eval_id": "book",
                    "history": HISTORY,
                    "conversation": [{"user_content": text} for text in turns],
                    "expectations": ["completes"],
                }
            ],
        }
    )


async def test_a_python_agents_history_starts_with_the_seeded_one(tmp_path: Path) -> None:
    seen: list[tuple[str, list[dict[str, Any]]]] = []

    def agent(message: str, history: list[dict[str, Any]]) -> str:
        seen.append((message, copy.deepcopy(history)))
        history.append({"role": "user", "content": "scribbled"})  # its own copy
        return f"ok: {message}"

    result = await evaluate(
        PythonAgent(agent),
        seeded_set("Book it", "Thanks"),
        runs=2,
        output_dir=tmp_path,
    )
    assert result.totals.passed == 2
    assert len(seen) == 4
    for message, history in seen:  # each trial starts from the seeded history
        if message == "Book it":
            assert history == WIRE
        else:
            assert history == [
                *WIRE,
                {"role": "user", "content": "Book it"},
                {"role": "assistant", "content": "ok: Book it"},
            ]


async def test_the_litellm_loop_sends_it_after_the_system_prompt(tmp_path: Path) -> None:
    with ScriptedOpenAIServer([Reply.text("Booked.")]) as server:
        agent = LiteLLMAgent(
            "openai/scripted", api_base=server.url, api_key="test", system_prompt="Be brief."
        )
        await evaluate(agent, seeded_set("Book it"), runs=1, output_dir=tmp_path)
        (request,) = server.requests
    assert request["messages"] == [
        {"role": "system", "content": "Be brief."},
        *WIRE,
        {"role": "user", "content": "Book it"},
    ]
