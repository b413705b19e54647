"""A Google ADK session as a conversation: the session JSON ``adk web`` exports and ADK's
session services store (camelCase or snake_case), read the way ADK's own "add session to
eval set" reads it (``convert_session_to_eval_invocations``): each user event starts a
turn; the function calls that follow are its tool calls (with their responses, matched by
id); the last text of the turn is its answer, earlier texts were said on the way. Besides,
what ADK's conversion drops is kept as events: which agent authored each step (a step
begins when the author changes), transfers to sub-agents, and each model response's
usage. The session's state is its final state; the state it started from is the final one
without the keys its events changed."""

from __future__ import annotations

from typing import Any

from agentflow_eval.files.sessions import Conversation, SessionSourceError
from agentflow_eval.models.evalset import SessionInput
from agentflow_eval.models.results import (
    HandoffEvent,
    MessageEvent,
    ModelCallEvent,
    NodeEvent,
    RecordedToolCall,
    ToolCallEvent,
    TrajectoryEvent,
    Turn,
    Usage,
)

__all__ = ["read", "recognises"]


def _get(node: Any, snake: str) -> Any:
    """``node[snake]``, or its camelCase spelling."""
    if not isinstance(node, dict):
        return None
    if snake in node:
        return node[snake]
    head, *rest = snake.split("_")
    return node.get(head + "".join(word.title() for word in rest))


def recognises(document: Any) -> bool:
    return (
        isinstance(document, dict)
        and isinstance(document.get("events"), list)
        and any(key in document for key in ("app_name", "appName", "user_id", "userId", "state"))
    )


def _parts(event: dict[str, Any]) -> list[dict[str, Any]]:
    content = event.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    return [part for part in parts or [] if isinstance(part, dict)]


def _text(event: dict[str, Any]) -> str:
    return "\n".join(
        str(part["text"]) for part in _parts(event) if isinstance(part.get("text"), str)
    ).strip()


class _TurnBuilder:
    """One invocation's events, collected as ADK wrote them."""

    def __init__(self, number: int, user_text: str, started: float | None) -> None:
        self.turn = Turn(invocation_id=f"turn-{number}", user_text=user_text)
        self.started = started
        self.author: str | None = None
        self.calls: dict[str, RecordedToolCall] = {}
        self.texts: list[tuple[str, str | None, float]] = []

    def at(self, event: dict[str, Any]) -> float:
        stamp = event.get("timestamp")
        if isinstance(stamp, int | float) and self.started is not None:
            return max(0.0, (float(stamp) - self.started) * 1000)
        return 0.0

    def add(self, event: dict[str, Any]) -> None:
        author = event.get("author") if isinstance(event.get("author"), str) else None
        at_ms = self.at(event)
        events: list[TrajectoryEvent] = self.turn.events
        if author and author != self.author:
            events.append(NodeEvent(name=author, at_ms=at_ms, author=author))
            self.author = author
        usage = _get(event, "usage_metadata")
        if isinstance(usage, dict):
            prompt = int(_get(usage, "prompt_token_count") or 0)
            completion = int(_get(usage, "candidates_token_count") or 0)
            events.append(
                ModelCallEvent(
                    model=_get(event, "model_version"),
                    usage=Usage(
                        prompt_tokens=prompt,
                        completion_tokens=completion,
                        total_tokens=int(_get(usage, "total_token_count") or prompt + completion),
                        calls=1,
                        unpriced_calls=1,  # a recorded session carries no price
                    ),
                    at_ms=at_ms,
                    author=author,
                )
            )
        for part in _parts(event):
            called = _get(part, "function_call")
            answered = _get(part, "function_response")
            if isinstance(called, dict):
                args = called.get("args")
                call = RecordedToolCall(
                    name=str(called.get("name") or ""),
                    args=dict(args) if isinstance(args, dict) else {},
                    id=called.get("id"),
                )
                self.calls[str(called.get("id"))] = call
                events.append(ToolCallEvent(call=call, at_ms=at_ms, author=author))
            elif isinstance(answered, dict):
                made = self.calls.get(str(answered.get("id")))
                if made is not None:
                    made.result = answered.get("response")
        text = _text(event)
        if text and event.get("author") != "user":
            self.texts.append((text, author, at_ms))
        target = _get(_get(event, "actions"), "transfer_to_agent")
        if isinstance(target, str) and target:
            events.append(HandoffEvent(source=author, target=target, at_ms=at_ms, author=author))
        error = _get(event, "error_message")
        if isinstance(error, str) and error and self.calls:
            last = list(self.calls.values())[-1]
            if last.result is None:
                last.error = error

    def finish(self) -> Turn:
        if self.texts:
            *said, (answer, _, _) = self.texts
            for text, author, at_ms in said:
                self.turn.events.append(MessageEvent(text=text, at_ms=at_ms, author=author))
            self.turn.events.sort(key=lambda e: e.at_ms)
            self.turn.final_response = answer
        return self.turn


def read(document: Any, source: str) -> Conversation:
    events = [event for event in document["events"] if isinstance(event, dict)]
    turns: list[Turn] = []
    current: _TurnBuilder | None = None
    touched: set[str] = set()
    for event in events:
        delta = _get(_get(event, "actions"), "state_delta")
        if isinstance(delta, dict):
            touched.update(str(key) for key in delta)
        if event.get("author") == "user" and _text(event):
            if current is not None:
                turns.append(current.finish())
            stamp = event.get("timestamp")
            started = float(stamp) if isinstance(stamp, int | float) else None
            current = _TurnBuilder(len(turns) + 1, _text(event), started)
        elif current is not None:
            current.add(event)
    if current is not None:
        turns.append(current.finish())
    if not turns:
        raise SessionSourceError(f"{source}: the ADK session has no user message")
    state = document.get("state")
    final_state = dict(state) if isinstance(state, dict) else None
    started_with = {k: v for k, v in (final_state or {}).items() if k not in touched}
    session_input = SessionInput(
        app_name=str(_get(document, "app_name") or ""),
        user_id=str(_get(document, "user_id") or ""),
        state=started_with,
    )
    return Conversation(
        turns=turns, final_state=final_state, session_input=session_input, source=source
    )
