"""The benchmark's scripted model: what the local server answers.

The weather agent makes two model calls per trial: a new user question gets a
``get_weather`` tool call for the city it names; a tool result gets the final answer
written from it. Requests to the judge model get a "valid" verdict in the JSON shape
``final_response_match_v2`` asks for. Answers are deterministic, so every trial passes
and a repeated run renders the same judge prompts (and can hit the judge cache).

Served by ``python -m agentflow_eval.testing.openai_server --handler
benchmarks.bench_model:handler``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentflow_eval.testing.openai_server import Reply

__all__ = ["AGENT_MODEL", "CITIES", "JUDGE_MODEL", "final_answer", "handler"]

AGENT_MODEL = "bench"
"""The agent's model name as the server sees it (LiteLLM's ``openai/bench``)."""
JUDGE_MODEL = "bench-judge"
"""The judge's model name as the server sees it (LiteLLM's ``openai/bench-judge``)."""

CITIES = ("New York", "Tokyo", "London", "Paris", "San Francisco", "Sydney")
"""Cities the weather example's ``get_weather`` tool knows."""

_CITY = re.compile(r"weather in (?P<city>[^?]+)\?")
_VERDICT = json.dumps(
    {"reasoning": "The response states the reference's facts.", "verdict": "valid"}
)


def final_answer(report: dict[str, Any]) -> str:
    """The final answer for one ``get_weather`` result (also the eval set's reference)."""
    return (
        f"The weather in {report['location']} is currently {report['condition']} "
        f"with a temperature of {report['temperature']}°F."
    )


def handler(request: dict[str, Any]) -> Reply:
    """The reply to one chat-completions request."""
    if request.get("model") == JUDGE_MODEL:
        return Reply.text(_VERDICT)
    messages = request.get("messages") or []
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return Reply.text(final_answer(json.loads(last["content"])))
    match = _CITY.search(str(last.get("content", "")))
    if match is None:
        return Reply.error(400, f"bench model: no 'weather in <city>?' in {last!r}")
    return Reply.tools(("get_weather", {"location": match.group("city")}))
