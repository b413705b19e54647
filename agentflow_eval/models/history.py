"""A case's seeded history: the conversation so far, before the case's own turns.

Written as OpenAI-style chat messages: ``user`` and ``assistant`` messages, an assistant's
``tool_calls`` (``{"id"?, "name", "args"}``) and the ``tool`` messages that answer them
(``tool_call_id``, the result as ``content``). Each trial's session starts with it
(:func:`chat_messages` gives it in the OpenAI chat wire format every agent kind reads).

A tool message answers the call its ``tool_call_id`` names; without one, it answers the
first unanswered call of the assistant message before it (the one of its ``name`` when
it gives one). Every call must be answered before the history ends or the next assistant
or user message: a chat model refuses a conversation with a call left open.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import AliasChoices, Field, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from agentflow_eval.models.file_model import FileModel

__all__ = ["HistoryMessage", "HistoryToolCall", "chat_messages", "check_history"]


class HistoryToolCall(FileModel):
    """A tool call an assistant message of the history made."""

    id: str | None = None
    """The call's id; a tool message answers it by this id (default: one is made up)."""
    name: str = Field(min_length=1)
    """The tool's name."""
    args: dict[str, Any] = Field(
        default_factory=dict, validation_alias=AliasChoices("args", "arguments")
    )
    """The arguments the call passed."""

    @model_validator(mode="before")
    @classmethod
    def _from_wire(cls, data: Any) -> Any:
        """The OpenAI wire shape, ``{"id", "type": "function", "function": {"name",
        "arguments": "<JSON>"}}``, as a transcript holds it."""
        if not isinstance(data, dict) or not isinstance(data.get("function"), dict):
            return data
        function = data["function"]
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                raise ValueError(f"function.arguments is not valid JSON: {exc.msg}") from None
        read: dict[str, Any] = {"name": function.get("name"), "args": arguments or {}}
        if data.get("id") is not None:
            read["id"] = data["id"]
        return read


class HistoryMessage(FileModel):
    """One message of the conversation so far."""

    role: Literal["user", "assistant", "tool"]
    """Who speaks: ``user``, ``assistant``, or ``tool`` (a tool call's result)."""
    content: str | None = None
    """What was said, or (a tool message) what the tool returned."""
    tool_calls: list[HistoryToolCall] = Field(default_factory=list)
    """An assistant message's tool calls."""
    tool_call_id: str | None = None
    """A tool message: the id of the call it answers."""
    name: str | None = None
    """A tool message: the tool's name."""

    @model_validator(mode="after")
    def _fields_of_its_role(self) -> HistoryMessage:
        if self.tool_calls and self.role != "assistant":
            raise ValueError(f"only an assistant message makes tool_calls, not a {self.role} one")
        if self.role != "tool":
            given = [key for key in ("tool_call_id", "name") if getattr(self, key) is not None]
            if given:
                raise ValueError(f"{given[0]} is for a tool message, not a {self.role} one")
        if self.role == "user" and not self.content:
            raise ValueError("a user message needs content")
        if self.role == "assistant" and not self.content and not self.tool_calls:
            raise ValueError("an assistant message needs content or tool_calls")
        return self


@dataclass(frozen=True)
class _Answered:
    """The history read: each call's id (made up where none was given) and the call id
    each tool message answers."""

    call_ids: dict[tuple[int, int], str]
    answers: dict[int, str]


@dataclass(frozen=True)
class _Problem:
    loc: tuple[int | str, ...]
    message: str


def _read(history: Sequence[HistoryMessage]) -> tuple[_Answered, list[_Problem]]:
    call_ids: dict[tuple[int, int], str] = {}
    answers: dict[int, str] = {}
    problems: list[_Problem] = []
    made: dict[str, tuple[int, int]] = {}
    open_calls: list[tuple[int, int]] = []  # the last assistant message's unanswered calls

    def close_open() -> None:
        for at in open_calls:
            problems.append(
                _Problem(
                    (at[0], "tool_calls", at[1]),
                    f"the call of {history[at[0]].tool_calls[at[1]].name!r} is never answered: "
                    "a tool message with its result must follow it",
                )
            )
        open_calls.clear()

    for index, message in enumerate(history):
        if message.role == "tool":
            answered = _answered_call(message, index, history, made, open_calls, problems)
            if answered is not None:
                answers[index] = call_ids[answered]
                open_calls.remove(answered)
            continue
        close_open()
        for number, call in enumerate(message.tool_calls):
            call_id = call.id or f"history_{index}_{number}"
            if call_id in made:
                problems.append(
                    _Problem((index, "tool_calls", number, "id"), f"id {call_id!r} is used twice")
                )
                continue
            call_ids[(index, number)] = call_id
            made[call_id] = (index, number)
            open_calls.append((index, number))
    close_open()
    return _Answered(call_ids, answers), problems


def _answered_call(
    message: HistoryMessage,
    index: int,
    history: Sequence[HistoryMessage],
    made: dict[str, tuple[int, int]],
    open_calls: list[tuple[int, int]],
    problems: list[_Problem],
) -> tuple[int, int] | None:
    """The call tool message ``index`` answers, or ``None`` (a problem recorded)."""
    wanted = message.tool_call_id
    if wanted is not None:
        at = made.get(wanted)
        if at is None:
            problems.append(
                _Problem(
                    (index, "tool_call_id"),
                    "answers no tool call an earlier assistant message made (their ids: "
                    f"{', '.join(repr(call_id) for call_id in made) or 'none'})",
                )
            )
            return None
        if at not in open_calls:
            problems.append(
                _Problem(
                    (index, "tool_call_id"),
                    "that call is answered already, or this answer comes after a later user or "
                    "assistant message (a result follows the message that made the call)",
                )
            )
            return None
        return at
    candidates = [
        at
        for at in open_calls
        if message.name is None or history[at[0]].tool_calls[at[1]].name == message.name
    ]
    if not candidates:
        problems.append(
            _Problem(
                (index, "tool_call_id"),
                "this tool message answers no open tool call of the assistant message before it",
            )
        )
        return None
    return candidates[0]


def check_history(history: Sequence[HistoryMessage]) -> list[HistoryMessage]:
    """``history`` if every tool message answers a call an earlier assistant message made
    and every call is answered; else a :class:`ValidationError` locating each problem
    (``[3].tool_call_id``), as a field validator raises it."""
    _, problems = _read(history)
    if problems:
        raise ValidationError.from_exception_data(
            "history",
            [
                InitErrorDetails(
                    type=PydanticCustomError("history", problem.message),
                    loc=problem.loc,
                    input=None,
                )
                for problem in problems
            ],
        )
    return list(history)


def chat_messages(history: Sequence[HistoryMessage]) -> tuple[dict[str, Any], ...]:
    """``history`` in the OpenAI chat wire format: an assistant's calls as ``{"id", "type":
    "function", "function": {"name", "arguments": "<JSON>"}}``, each tool message with the
    id of the call it answers."""
    read, _ = _read(history)
    wire: list[dict[str, Any]] = []
    for index, message in enumerate(history):
        if message.role == "user":
            wire.append({"role": "user", "content": message.content or ""})
        elif message.role == "assistant":
            out: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                out["tool_calls"] = [
                    {
                        "id": read.call_ids.get((index, number), call.id or ""),
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": json.dumps(call.args, ensure_ascii=False),
                        },
                    }
                    for number, call in enumerate(message.tool_calls)
                ]
            wire.append(out)
        else:
            out = {
                "role": "tool",
                "tool_call_id": read.answers.get(index, message.tool_call_id or ""),
                "content": message.content or "",
            }
            if message.name is not None:
                out["name"] = message.name
            wire.append(out)
    return tuple(wire)
