"""A whole conversation as the multi-turn judges are shown it: every turn's user message,
what the agent said on its way, its tool calls with their results, and its answer, in
the order they happened, one JSON object a line (``turn`` counts from 1)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentflow_eval.models.results import MessageEvent, ToolCallEvent, Turn

__all__ = ["conversation_lines", "dialogue_lines"]


def _line(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, default=str)


def conversation_lines(turns: Sequence[Turn]) -> str:
    """Every event of ``turns`` that a reader of the conversation sees: the user's
    messages, the agent's messages (intermediate and final), its tool calls and their
    results or errors. A turn that ended without an answer says so."""
    lines: list[str] = []
    for number, turn in enumerate(turns, start=1):
        lines.append(_line({"turn": number, "role": "user", "text": turn.user_text}))
        answered = False
        for event in turn.events:
            if isinstance(event, MessageEvent) and event.text:
                answered = answered or event.final
                row: dict[str, Any] = {"turn": number, "role": "agent", "text": event.text}
                if event.author:
                    row["author"] = event.author
                lines.append(_line(row))
            elif isinstance(event, ToolCallEvent):
                call = event.call
                outcome = (
                    {"error": call.error} if call.error is not None else {"result": call.result}
                )
                lines.append(
                    _line({"turn": number, "tool_call": call.name, "args": call.args, **outcome})
                )
        if not answered:
            if turn.final_response:
                lines.append(_line({"turn": number, "role": "agent", "text": turn.final_response}))
            else:
                lines.append(_line({"turn": number, "role": "agent", "text": None}))
    return "\n".join(lines) if lines else "(no turns)"


def dialogue_lines(turns: Sequence[Turn]) -> str:
    """The user's and the agent's messages only (what a simulated user saw), one JSON
    object a line."""
    lines: list[str] = []
    for number, turn in enumerate(turns, start=1):
        lines.append(_line({"turn": number, "role": "user", "text": turn.user_text}))
        lines.append(_line({"turn": number, "role": "agent", "text": turn.final_response}))
    return "\n".join(lines) if lines else "(nothing said yet)"
