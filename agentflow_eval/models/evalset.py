"""Eval-set models: what a case asks of the agent and what a good run looks like.

The same models read seed-style native files (``content: [{"type": "text", ...}]``) and
Google ADK eval files unchanged (``parts``, ``final_response``, ``intermediate_data``,
snake_case or camelCase keys). Every model is pydantic at this file-format edge; the
normalisation of ADK shapes happens in ``mode="before"`` validators so the rest of the
code only ever sees one shape.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

__all__ = [
    "CallsTool",
    "Completes",
    "ContentPart",
    "ConversationScenario",
    "EvalCase",
    "EvalSet",
    "Expectation",
    "FinalContains",
    "Invocation",
    "Message",
    "Rubric",
    "SessionInput",
    "ToolCall",
]


class FileModel(BaseModel):
    """Base for file-format models: snake_case or camelCase keys, unknown keys rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        serialize_by_alias=False,
    )


class ContentPart(FileModel):
    """One part of a message. Text parts carry ``text``; other ADK parts (function calls,
    inline data) are kept as they were so nothing in the file is lost."""

    model_config = ConfigDict(extra="allow")

    type: str = "text"
    text: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _infer_type(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"type": "text", "text": data}
        if isinstance(data, dict) and "type" not in data:
            if "text" in data:
                return {"type": "text", **data}
            kinds = [k for k, v in data.items() if v is not None and k != "thought"]
            if kinds:
                return {"type": kinds[0], **data}
        return data


class Message(FileModel):
    """A message: a role and its content parts.

    Accepts a bare string, ``{"role", "content": str | [parts]}`` (seed 001) or ADK's
    ``{"role", "parts": [...]}``.
    """

    role: str = "user"
    content: list[ContentPart] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"content": [{"type": "text", "text": data}]}
        if isinstance(data, dict):
            data = dict(data)
            if "parts" in data and "content" not in data:
                data["content"] = data.pop("parts") or []
            content = data.get("content")
            if isinstance(content, str):
                data["content"] = [{"type": "text", "text": content}]
            elif content is None and "content" in data:
                data["content"] = []
            if data.get("role") is None:
                data.pop("role", None)
        return data

    @property
    def text(self) -> str:
        """The message's text parts joined by newlines."""
        return "\n".join(p.text for p in self.content if p.type == "text" and p.text)

    @classmethod
    def of(cls, text: str, role: str = "user") -> Message:
        return cls(role=role, content=[ContentPart(text=text)])


class ToolCall(FileModel):
    """An expected (or recorded) tool call: a name and its arguments."""

    name: str = Field(validation_alias=AliasChoices("name", "tool_name", "toolName"))
    args: dict[str, Any] = Field(
        default_factory=dict,
        validation_alias=AliasChoices("args", "arguments", "tool_input", "toolInput"),
    )
    id: str | None = None

    @field_validator("args", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value

    @model_validator(mode="before")
    @classmethod
    def _drop_adk_nulls(cls, data: Any) -> Any:
        # ADK dumps of genai FunctionCall carry newer fields as nulls
        # (``partial_args``, ``will_continue``); a null says nothing, so it is dropped.
        if isinstance(data, dict) and any(data.get(k, 0) is None for k in _ADK_CALL_EXTRAS):
            return {k: v for k, v in data.items() if not (k in _ADK_CALL_EXTRAS and v is None)}
        return data


_ADK_CALL_EXTRAS = frozenset({"partial_args", "partialArgs", "will_continue", "willContinue"})


class Rubric(FileModel):
    """A yes/no quality property judged by an LLM. ADK's ``rubric_content.text_property``
    and a plain string are both accepted."""

    model_config = ConfigDict(extra="ignore")

    rubric_id: str
    rubric_content: str
    description: str | None = None

    @field_validator("rubric_content", mode="before")
    @classmethod
    def _text_property(cls, value: Any) -> Any:
        if isinstance(value, dict):
            text = value.get("text_property", value.get("textProperty"))
            if text is not None:
                return text
        return value


class SessionInput(FileModel):
    """How the agent's session starts: app, user, and initial state."""

    model_config = ConfigDict(extra="allow")

    app_name: str = ""
    user_id: str = ""
    session_id: str | None = None
    state: dict[str, Any] = Field(default_factory=dict)


class ConversationScenario(FileModel):
    """A goal for a simulated user instead of fixed user turns (ADK compatible)."""

    model_config = ConfigDict(extra="allow")

    starting_prompt: str
    conversation_plan: str
    user_persona: Any = None


class Invocation(FileModel):
    """One user turn and what the agent is expected to do with it."""

    invocation_id: str = ""
    user_content: Message
    expected_tool_trajectory: list[ToolCall] = Field(default_factory=list)
    expected_intermediate_responses: list[Message] = Field(default_factory=list)
    expected_final_response: Message | None = None
    rubrics: list[Rubric] = Field(default_factory=list)
    # ADK bookkeeping fields: accepted so ADK files load, not used for judging.
    creation_timestamp: float | None = None
    app_details: Any = None
    inference_call_count: int | None = None
    duration: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_adk(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "query" in data and "user_content" not in data and "userContent" not in data:
            data["user_content"] = data.pop("query")  # legacy ADK *.test.json rows
        for legacy, native in (
            ("final_response", "expected_final_response"),
            ("finalResponse", "expected_final_response"),
            ("reference", "expected_final_response"),
            ("expected_tool_use", "expected_tool_trajectory"),
        ):
            if legacy in data:
                value = data.pop(legacy)
                data.setdefault(native, value)
        intermediate = data.pop("intermediate_data", data.pop("intermediateData", None))
        if isinstance(intermediate, dict):
            tools, responses = _read_intermediate_data(intermediate)
            data.setdefault("expected_tool_trajectory", tools)
            data.setdefault("expected_intermediate_responses", responses)
        for key in ("rubrics",):
            if data.get(key) is None:
                data.pop(key, None)
        return data


def _read_intermediate_data(raw: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """ADK's intermediate data, either ``tool_uses`` + ``intermediate_responses`` or a
    list of ``invocation_events`` whose parts hold function calls and text."""
    events = raw.get("invocation_events", raw.get("invocationEvents"))
    if events is not None:
        tools: list[Any] = []
        texts: list[Any] = []
        for event in events or []:
            content = (event or {}).get("content") or {}
            for part in content.get("parts") or []:
                call = part.get("function_call", part.get("functionCall"))
                if call:
                    tools.append(call)
                elif part.get("text"):
                    texts.append({"role": "model", "content": [{"text": part["text"]}]})
        return tools, texts
    tools = list(raw.get("tool_uses", raw.get("toolUses")) or [])
    texts = []
    for item in raw.get("intermediate_responses", raw.get("intermediateResponses")) or []:
        if isinstance(item, list | tuple) and len(item) == 2:
            author, parts = item
            texts.append({"role": str(author or "model"), "content": parts or []})
        else:
            texts.append(item)
    return tools, texts


class Completes(FileModel):
    """The agent reached a final answer: no error, no exhausted step budget (seed 003)."""

    type: Literal["completes"] = "completes"

    @property
    def label(self) -> str:
        return "completes"


class CallsTool(FileModel):
    """The agent called the named tool at least once (seed 003)."""

    type: Literal["calls_tool"] = "calls_tool"
    name: str

    @property
    def label(self) -> str:
        return f"calls {self.name}"


class FinalContains(FileModel):
    """The final answer contains this text (seed 003)."""

    type: Literal["final_contains"] = "final_contains"
    text: str
    case_sensitive: bool = True

    @property
    def label(self) -> str:
        return f"final contains {json.dumps(self.text, ensure_ascii=False)}"


def _expectation_shorthand(data: Any) -> Any:
    """``"completes"``, ``{"calls_tool": "x"}`` and ``{"final_contains": "7"}`` are short
    for the typed forms."""
    if data == "completes":
        return {"type": "completes"}
    if isinstance(data, dict) and "type" not in data and len(data) == 1:
        ((key, value),) = data.items()
        if key == "completes":
            return {"type": "completes"}
        if key in ("calls_tool", "callsTool"):
            return {"type": "calls_tool", "name": value}
        if key in ("final_contains", "finalContains"):
            return {"type": "final_contains", "text": value}
    return data


Expectation = Annotated[Completes | CallsTool | FinalContains, Field(discriminator="type")]


class EvalCase(FileModel):
    """One evaluation case: a conversation (or a simulated-user scenario) and what a good
    run of it looks like."""

    # ADK lets eval cases carry fields of their own; we keep them (the loader warns).
    model_config = ConfigDict(extra="allow")

    eval_id: str = Field(min_length=1)
    conversation: list[Invocation] = Field(default_factory=list)
    conversation_scenario: ConversationScenario | None = None
    session_input: SessionInput | None = None
    expectations: list[Expectation] = Field(default_factory=list)
    rubrics: list[Rubric] = Field(default_factory=list)
    context: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    creation_timestamp: float | None = None
    final_session_state: dict[str, Any] | None = None

    @field_validator("expectations", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [_expectation_shorthand(item) for item in value]
        return value

    @field_validator("conversation", "rubrics", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value

    @model_validator(mode="after")
    def _has_turns(self) -> EvalCase:
        if not self.conversation and self.conversation_scenario is None:
            raise ValueError("a case needs a non-empty 'conversation' or a 'conversation_scenario'")
        if self.conversation and self.conversation_scenario is not None:
            raise ValueError("a case takes 'conversation' or 'conversation_scenario', not both")
        for index, invocation in enumerate(self.conversation):
            if not invocation.invocation_id:
                invocation.invocation_id = f"{self.eval_id}-{index + 1}"
        return self

    @property
    def unknown_fields(self) -> list[str]:
        return sorted((self.model_extra or {}).keys())


class EvalSet(FileModel):
    """A named collection of eval cases."""

    model_config = ConfigDict(extra="ignore")

    eval_set_id: str = Field(min_length=1)
    name: str = ""
    description: str = ""
    eval_cases: list[EvalCase]
    creation_timestamp: float | None = None

    @field_validator("name", "description", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value  # ADK writes ``"description": null``

    @model_validator(mode="after")
    def _unique_ids(self) -> EvalSet:
        seen: set[str] = set()
        for case in self.eval_cases:
            if case.eval_id in seen:
                raise ValueError(f"eval_id {case.eval_id!r} appears more than once")
            seen.add(case.eval_id)
        return self

    def case(self, eval_id: str) -> EvalCase:
        for case in self.eval_cases:
            if case.eval_id == eval_id:
                return case
        raise KeyError(eval_id)
