"""An OpenAI-style chat transcript as a conversation: the ``messages`` of chat-completions
requests (a JSON list, or ``{"messages": [...]}``). A user message starts a turn; an
assistant message with ``tool_calls`` makes those calls (its text said on the way), each
``tool`` message is a call's result (matched by ``tool_call_id``), and the last
assistant text before the next user message is the turn's answer. System messages are
left out (they are the agent's, not the conversation's)."""

from __future__ import annotations

from typing import Any

from agentflow_eval.files.limits import UnreadableFile, parse_json
from agentflow_eval.files.sessions import Conversation, SessionSourceError
from agentflow_eval.models.results import MessageEvent, RecordedToolCall, ToolCallEvent, Turn

__all__ = ["read", "recognises"]


def _messages(document: Any) -> list[Any] | None:
    if isinstance(document, dict):
        document = document.get("messages")
    if isinstance(document, list) and all(isinstance(m, dict) for m in document):
        return document
    return None


def recognises(document: Any) -> bool:
    messages = _messages(document)
    return bool(messages) and all("role" in m for m in messages or [])


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        ).strip()
    return ""


def _arguments(raw: Any, source: str) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = parse_json(raw or "{}", source)
    except (TypeError, UnreadableFile):
        raise SessionSourceError(
            f"{source}: a tool call's arguments are not JSON: {raw!r}"
        ) from None
    if not isinstance(parsed, dict):
        raise SessionSourceError(f"{source}: a tool call's arguments are not an object: {raw!r}")
    return parsed


def _result(content: Any) -> Any:
    text = _text(content)
    try:
        return parse_json(text, "a tool result")
    except (TypeError, UnreadableFile):
        return text


def read(document: Any, source: str) -> Conversation:
    messages = _messages(document)
    assert messages is not None
    turns: list[Turn] = []
    calls: dict[str, RecordedToolCall] = {}
    notes: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "system":
            if "system prompt" not in " ".join(notes):
                notes.append("the system prompt is the agent's: left out of the case")
            continue
        if role == "user":
            turns.append(
                Turn(
                    invocation_id=f"turn-{len(turns) + 1}", user_text=_text(message.get("content"))
                )
            )
            continue
        if not turns:
            raise SessionSourceError(
                f"{source}: message {index} ({role}) comes before any user message"
            )
        turn = turns[-1]
        if role == "assistant":
            text = _text(message.get("content"))
            if message.get("tool_calls"):
                if text:
                    turn.events.append(MessageEvent(text=text))
                for raw in message["tool_calls"]:
                    function = raw.get("function") or {}
                    call = RecordedToolCall(
                        name=str(function.get("name") or ""),
                        args=_arguments(function.get("arguments"), source),
                        id=raw.get("id"),
                    )
                    calls[str(raw.get("id"))] = call
                    turn.events.append(ToolCallEvent(call=call))
            elif text:
                if turn.final_response is not None:  # an earlier text was said on the way
                    turn.events.append(MessageEvent(text=turn.final_response))
                turn.final_response = text
        elif role == "tool":
            answered = calls.get(str(message.get("tool_call_id")))
            if answered is None:
                raise SessionSourceError(
                    f"{source}: message {index} answers tool call "
                    f"{message.get('tool_call_id')!r}, which no assistant message made"
                )
            answered.result = _result(message.get("content"))
        else:
            raise SessionSourceError(f"{source}: message {index} has role {role!r}")
    if not turns:
        raise SessionSourceError(f"{source}: the transcript has no user message")
    return Conversation(turns=turns, source=source, notes=notes)
