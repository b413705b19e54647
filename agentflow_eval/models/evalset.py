"""Eval-set models: what a case asks of the agent and what a good run looks like.

The same models read seed-style native files (``content: [{"type": "text", ...}]``) and
Google ADK eval files unchanged (``parts``, ``final_response``, ``intermediate_data``,
snake_case or camelCase keys). Every model is pydantic at this file-format edge; the
normalisation of ADK shapes happens in ``mode="before"`` validators so the rest of the
code only ever sees one shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from agentflow_eval.models.end_state import EndStateCheck
from agentflow_eval.models.environment_spec import EnvironmentSpec
from agentflow_eval.models.file_model import FileModel
from agentflow_eval.models.history import HistoryMessage, check_history
from agentflow_eval.models.matching import OutputMatch
from agentflow_eval.models.tool_mocks import ToolMock, UnmockedPolicy

__all__ = [
    "CallsTool",
    "Completes",
    "ContentPart",
    "ConversationScenario",
    "EvalCase",
    "EvalSet",
    "Expectation",
    "FileModel",
    "FinalContains",
    "HistoryMessage",
    "Invocation",
    "Message",
    "OutputMatches",
    "Rubric",
    "SessionInput",
    "ToolCall",
    "as_text",
]


class ContentPart(FileModel):
    """One part of a message. Text parts carry ``text``; other ADK parts (function calls,
    inline data) are kept as they were so nothing in the file is lost."""

    model_config = ConfigDict(extra="allow")

    type: str = "text"
    """The kind of part: ``text``, or an ADK kind (``function_call``, ``inline_data``...)."""
    text: str | None = None
    """The text of a text part."""

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

    Accepts a bare string, ``{"role", "content": str | [parts]}`` (native) or ADK's
    ``{"role", "parts": [...]}``.
    """

    role: str = "user"
    """Who speaks: ``user``, ``assistant`` or ADK's ``model``."""
    content: list[ContentPart] = Field(default_factory=list)
    """The message's parts; text parts are joined with newlines."""

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
    """The tool's name."""
    args: dict[str, Any] = Field(
        default_factory=dict,
        validation_alias=AliasChoices("args", "arguments", "tool_input", "toolInput"),
    )
    """The arguments, compared as the criterion's ``args_match`` says."""
    id: str | None = None
    """The call's id, if the file records one (not compared)."""

    partial_args: list[dict[str, Any]] | None = None
    """ADK (genai ``FunctionCall``): arguments streamed in pieces; accepted, not compared
    (``args`` holds the call's arguments; a load warning names it)."""
    will_continue: bool | None = None
    """ADK (genai ``FunctionCall``): more streamed pieces follow; accepted, not compared
    (a load warning names it)."""

    @field_validator("args", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value

    @property
    def streaming_fields(self) -> list[str]:
        """The streaming fields this call carries (not compared)."""
        return [key for key in ("partial_args", "will_continue") if getattr(self, key) is not None]


class Rubric(FileModel):
    """A yes/no quality property judged by an LLM.

    Written as ADK writes it (``rubric_id``, ``rubric_content: {"text_property": ...}``),
    with the content as a plain string, or in the short form ``{"id", "content"}``.
    ``type`` (ADK's ``FINAL_RESPONSE_QUALITY`` or ``TOOL_USE_QUALITY``) limits a case's or
    an invocation's rubric to the rubric criterion of that kind."""

    rubric_id: str = Field(validation_alias=AliasChoices("rubric_id", "rubricId", "id"))
    """A name for the rubric, unique where it is given; a narrower level's rubric
    replaces a wider one's of the same id."""
    rubric_content: str = Field(
        validation_alias=AliasChoices("rubric_content", "rubricContent", "content")
    )
    """The yes/no property the judge checks, e.g. "The answer names the city"."""
    description: str | None = None
    """A note for people; not shown to the judge."""
    type: str | None = None
    """ADK's rubric type: on a case's or a turn's rubric, ``FINAL_RESPONSE_QUALITY`` or
    ``TOOL_USE_QUALITY`` limits it to that rubric criterion; an untyped rubric goes to
    both, one of another type to neither."""

    @field_validator("rubric_content", mode="before")
    @classmethod
    def _text_property(cls, value: Any) -> Any:
        if isinstance(value, dict):
            unknown = sorted(set(value) - {"text_property", "textProperty"})
            if unknown:
                raise ValueError(
                    f"unknown key {unknown[0]!r} in rubric content; expected text_property"
                )
            text = value.get("text_property", value.get("textProperty"))
            if not text:
                raise ValueError("the rubric's text_property is empty")
            return text
        return value


class SessionInput(FileModel):
    """How the agent's session starts: app, user, and initial state."""

    model_config = ConfigDict(extra="allow")

    app_name: str = ""
    """The application the session belongs to (ADK)."""
    user_id: str = ""
    """The user the session is for."""
    session_id: str | None = None
    """A fixed session id; by default each trial gets a fresh one."""
    state: dict[str, Any] = Field(default_factory=dict)
    """The session's initial state: an agent function's ``state`` starts as a copy."""


class ConversationScenario(FileModel):
    """A goal for a simulated user instead of fixed user turns (ADK compatible). ADK's
    ``user_persona`` (a persona id such as ``"NOVICE"``, or the persona object its dumps
    write) is given to the simulated user as written."""

    starting_prompt: str
    """The simulated user's first message, sent as written."""
    conversation_plan: str
    """What the simulated user should get done, step by step; it ends the conversation
    when the plan is done."""
    user_persona: Any = None
    """Who the simulated user is (text or an ADK persona object), shown to its model."""


class Invocation(FileModel):
    """One user turn and what the agent is expected to do with it."""

    invocation_id: str = ""
    """The turn's id (default ``<eval_id>-<n>``)."""
    user_content: Message
    """What the user says in this turn."""
    expected_tool_trajectory: list[ToolCall] = Field(default_factory=list)
    """The tool calls a good run makes in this turn (``tool_trajectory_avg_score``)."""
    expected_nodes: list[str] = Field(default_factory=list)
    """The steps a good run takes in this turn, in order: graph nodes, agents or
    sub-agents, by name (``router``) or with the subgraph or parent agents that hold them
    (``research/summarize``) (``node_trajectory_avg_score``)."""
    expected_intermediate_responses: list[Message] = Field(default_factory=list)
    """Text the agent is expected to say between tool calls (reported, not scored)."""
    expected_final_response: Message | None = None
    """The reference answer (``response_match_score``, ``final_response_match_v2``)."""
    rubrics: list[Rubric] = Field(default_factory=list)
    """Rubrics for this turn only (the rubric criteria)."""
    tool_mocks: list[ToolMock] = Field(default_factory=list)
    """Tools mocked in this turn only (tried before the case's and the config's)."""
    expected_tool_responses: list[dict[str, Any]] = Field(default_factory=list)
    """What the tools returned in the recorded run (ADK's ``tool_responses``, or the
    ``function_response`` parts of its invocation events): kept, not judged."""
    app_details: dict[str, Any] | None = None
    """ADK's record of the app's agents (instructions, tool declarations): kept, not
    judged."""
    # Bookkeeping of the run the file was recorded from; accepted, not judged.
    creation_timestamp: float | None = None
    """ADK bookkeeping; accepted, not used."""
    inference_call_count: int | None = None
    """ADK bookkeeping; accepted, not used."""
    duration: float | None = None
    """ADK bookkeeping; accepted, not used."""
    model_duration: float | None = None
    """ADK bookkeeping; accepted, not used."""
    tool_duration: float | None = None
    """ADK bookkeeping; accepted, not used."""

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
        if isinstance(data.get("expected_final_response"), str):
            # A plain-text reference answer is the agent's, not the user's.
            data["expected_final_response"] = {
                "role": "assistant",
                "content": data["expected_final_response"],
            }
        intermediate = data.pop("intermediate_data", data.pop("intermediateData", None))
        if isinstance(intermediate, dict):
            read = _read_intermediate_data(intermediate)
            data.setdefault("expected_tool_trajectory", read.tool_calls)
            data.setdefault("expected_intermediate_responses", read.texts)
            if read.tool_responses:
                data.setdefault("expected_tool_responses", read.tool_responses)
        elif intermediate is not None:
            raise ValueError(
                "intermediate_data must be an object with tool_uses, tool_responses and "
                "intermediate_responses, or with invocation_events"
            )
        for key in ("rubrics",):
            if data.get(key) is None:
                data.pop(key, None)
        return data


@dataclass(frozen=True)
class _IntermediateData:
    tool_calls: list[Any]
    texts: list[Any]
    tool_responses: list[Any]


_TOOL_USE_KEYS = {
    "tool_uses": "tool_uses",
    "toolUses": "tool_uses",
    "tool_responses": "tool_responses",
    "toolResponses": "tool_responses",
    "intermediate_responses": "intermediate_responses",
    "intermediateResponses": "intermediate_responses",
}
_EVENTS_KEYS = ("invocation_events", "invocationEvents")


def _read_intermediate_data(raw: dict[str, Any]) -> _IntermediateData:
    """ADK's intermediate data, in either of its two shapes: ``tool_uses`` +
    ``tool_responses`` + ``intermediate_responses``, or a list of ``invocation_events``
    whose parts hold function calls, function responses and text. Other keys are refused,
    as ADK refuses them."""
    events_key = next((key for key in _EVENTS_KEYS if key in raw), None)
    if events_key is not None:
        others = sorted(key for key in raw if key != events_key)
        if others:
            raise ValueError(
                f"intermediate_data has {events_key} and {others[0]!r}; it takes either "
                "invocation_events or tool_uses/tool_responses/intermediate_responses"
            )
        return _read_events(raw[events_key])
    unknown = sorted(key for key in raw if key not in _TOOL_USE_KEYS)
    if unknown:
        raise ValueError(
            f"intermediate_data has an unknown key {unknown[0]!r}; expected tool_uses, "
            "tool_responses, intermediate_responses or invocation_events"
        )
    fields = {_TOOL_USE_KEYS[key]: value for key, value in raw.items()}
    texts = []
    for item in fields.get("intermediate_responses") or []:
        if isinstance(item, list | tuple) and len(item) == 2:
            author, parts = item
            texts.append({"role": str(author or "model"), "content": parts or []})
        else:
            texts.append(item)
    return _IntermediateData(
        tool_calls=list(fields.get("tool_uses") or []),
        texts=texts,
        tool_responses=list(fields.get("tool_responses") or []),
    )


def _read_events(events: Any) -> _IntermediateData:
    tools: list[Any] = []
    texts: list[Any] = []
    responses: list[Any] = []
    for event in events or []:
        content = (event or {}).get("content") or {}
        text_parts: list[dict[str, Any]] = []
        for part in content.get("parts") or []:
            call = part.get("function_call", part.get("functionCall"))
            response = part.get("function_response", part.get("functionResponse"))
            if call:
                tools.append(call)
            elif response:
                responses.append(response)
            elif part.get("text"):
                text_parts.append({"text": part["text"]})
        if text_parts:  # one intermediate response per event, as ADK reads it
            author = (event or {}).get("author") or "model"
            texts.append({"role": str(author), "content": text_parts})
    return _IntermediateData(tool_calls=tools, texts=texts, tool_responses=responses)


class Completes(FileModel):
    """The agent reached a final answer: no error, no exhausted step budget."""

    type: Literal["completes"] = "completes"
    """The expectation: the agent finishes with a final answer."""

    @property
    def label(self) -> str:
        return "completes"


class CallsTool(FileModel):
    """The agent called the named tool at least once."""

    type: Literal["calls_tool"] = "calls_tool"
    """The expectation: the agent calls a tool."""
    name: str
    """The tool that must be called at least once."""

    @property
    def label(self) -> str:
        return f"calls {self.name}"


class FinalContains(FileModel):
    """The final answer contains this text."""

    type: Literal["final_contains"] = "final_contains"
    """The expectation: the final answer contains a text."""
    text: str
    """The text the last turn's final answer must contain."""
    case_sensitive: bool = True
    """Whether case must match."""

    @property
    def label(self) -> str:
        return f"final contains {json.dumps(self.text, ensure_ascii=False)}"


class OutputMatches(FileModel):
    """The component's output matches the expected one (a component case states it with
    ``expected_output`` and ``output_match``; it reads the answer's text for an agent)."""

    type: Literal["output_matches"] = "output_matches"
    """The expectation: the output matches an expected value."""
    expected: Any = None
    """The expected output (any JSON value)."""
    match: OutputMatch = "exact"
    """How it is compared: ``exact`` (JSON-equal), ``contains`` (a substring of a text, an
    element of a list) or ``json_subset`` (every key of the expected object, recursively)."""

    @property
    def label(self) -> str:
        # the same for every case of a kind, so a run's summary adds them up (the expected
        # value is in each verdict's details)
        return f"output matches ({self.match})"


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


Expectation = Annotated[
    Completes | CallsTool | FinalContains | OutputMatches, Field(discriminator="type")
]


class EvalCase(FileModel):
    """One evaluation case: a conversation (or a simulated-user scenario) and what a good
    run of it looks like."""

    # ADK lets eval cases carry fields of their own; we keep them (the loader warns).
    model_config = ConfigDict(extra="allow")

    eval_id: str = Field(min_length=1)
    """The case's id, unique in the eval set (``--case`` patterns match it)."""
    conversation: list[Invocation] = Field(default_factory=list)
    """The user's turns, in order, each with what a good run does with it."""
    conversation_scenario: ConversationScenario | None = None
    """Instead of fixed turns: a goal for a simulated user (needs the config's
    ``user_simulator_config``)."""
    session_input: SessionInput | None = None
    """How each trial's session starts (its initial state)."""
    expectations: list[Expectation] = Field(default_factory=list)
    """Yes/no checks for this case: ``"completes"``, ``{"calls_tool": name}``,
    ``{"final_contains": text}``."""
    rubrics: list[Rubric] = Field(default_factory=list)
    """Rubrics for every turn of this case (the rubric criteria)."""
    context: str | None = None
    """Background the agent had, shown to ``hallucinations_v1`` as grounding."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything of one's own; kept, not used."""
    creation_timestamp: float | None = None
    """ADK bookkeeping; accepted, not used."""
    final_session_state: dict[str, Any] | None = None
    """ADK's expected final state; accepted, not compared."""
    end_state: list[EndStateCheck] = Field(default_factory=list)
    """What the world must look like when the trial is over (``end_state_match``):
    rows a query returns from the trial's database, a file's text or a JSON path's
    value, what the environment captured, or a function's verdict."""
    tool_mocks: list[ToolMock] = Field(default_factory=list)
    """Tools mocked in every turn of this case (tried before the config's)."""
    unmocked_tools: UnmockedPolicy | None = None
    """What a tool call no mock answers does in this case: ``run`` the real tool or
    ``fail`` the call (default: the config's)."""
    history: list[HistoryMessage] = Field(default_factory=list)
    """The conversation so far, before the case's turns (OpenAI-style ``user``,
    ``assistant`` and ``tool`` messages, an assistant's ``tool_calls``): every trial's
    session starts with it."""
    next_step_only: bool = False
    """Judge only the agent's next step: the tool calls it makes before its second model
    call, or, when it calls no tool, its answer (the case has one turn)."""
    component: str | None = None
    """A component case: the function under test, ``module:attr`` or ``file.py:attr``
    (sync or async), called once per trial with ``input`` or ``arguments``; the case has
    no ``conversation``."""
    input: Any = None
    """A component case: the one positional argument the component is called with."""
    arguments: dict[str, Any] | None = None
    """A component case: the keyword arguments the component is called with (instead of
    ``input``)."""
    expected_output: Any = None
    """A component case: what the component should return (any JSON value)."""
    output_match: OutputMatch = "exact"
    """A component case: how its output is compared with ``expected_output``: ``exact``
    (JSON-equal), ``contains`` (a substring, or a list element) or ``json_subset``."""

    @field_validator("history", mode="after")
    @classmethod
    def _answered(cls, value: list[HistoryMessage]) -> list[HistoryMessage]:
        return check_history(value)

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
        if self.component is not None:
            return self._as_component()
        given = [key for key in _COMPONENT_FIELDS if _given(self, key)]
        if given:
            raise ValueError(f"{given[0]!r} is for a component case: give 'component' too")
        if not self.conversation and self.conversation_scenario is None:
            raise ValueError("a case needs a non-empty 'conversation' or a 'conversation_scenario'")
        if self.conversation and self.conversation_scenario is not None:
            raise ValueError("a case takes 'conversation' or 'conversation_scenario', not both")
        if self.conversation_scenario is not None and (self.history or self.next_step_only):
            raise ValueError(
                "a simulated-user scenario takes no 'history' or 'next_step_only': give a "
                "'conversation'"
            )
        if self.next_step_only and len(self.conversation) != 1:
            raise ValueError(
                f"next_step_only judges the agent's next step after one user turn; this case "
                f"has {len(self.conversation)} turns (put the earlier ones in 'history')"
            )
        for index, invocation in enumerate(self.conversation):
            if not invocation.invocation_id:
                invocation.invocation_id = f"{self.eval_id}-{index + 1}"
        return self

    def _as_component(self) -> EvalCase:
        """A component case's own checks, and the turn and expectation it stands for (not
        fields the file set: writing the case back writes what its author wrote). A case
        dumped whole and read again (its turn and expectation written out) reads the
        same."""
        target, sep, attr = (self.component or "").rpartition(":")
        if not sep or not target.strip() or not attr.strip():
            raise ValueError(
                f"component {self.component!r} is not 'module:attr' or 'path/to/file.py:attr'"
            )
        for key in _NOT_FOR_COMPONENTS:
            if _given(self, key):
                raise ValueError(f"a component case takes no {key!r}: it calls no agent")
        if self.arguments is not None and _given(self, "input") and self.input is not None:
            raise ValueError(
                "a component case takes 'input' (its one argument) or 'arguments' (keyword "
                "arguments), not both"
            )
        if self.arguments is None and "input" not in self.model_fields_set:
            raise ValueError(
                "a component case needs 'input' (its one argument) or 'arguments' (keyword "
                "arguments)"
            )
        if "expected_output" not in self.model_fields_set:
            raise ValueError("a component case needs 'expected_output'")
        set_by_author = set(self.model_fields_set) - {"conversation"}
        turn = Invocation(
            invocation_id=f"{self.eval_id}-1",
            user_content=Message.of(as_text(self.call_input)),
            expected_final_response=Message.of(as_text(self.expected_output), "assistant"),
        )
        if self.conversation and [t.model_dump() for t in self.conversation] != [turn.model_dump()]:
            raise ValueError("a component case takes no 'conversation': it calls no agent")
        self.conversation = [turn]
        judged = OutputMatches(expected=self.expected_output, match=self.output_match)
        if not self.expectations or self.expectations[-1] != judged:
            self.expectations = [*self.expectations, judged]
        if self.expectations == [judged]:
            set_by_author.discard("expectations")
        self.__pydantic_fields_set__ = set_by_author
        return self

    @property
    def call_input(self) -> Any:
        """A component case's input as given: ``input``, or the ``arguments`` object."""
        return self.arguments if self.arguments is not None else self.input

    @property
    def call_arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """How a component case calls its function: ``(input,)``, or the ``arguments`` as
        keyword arguments."""
        if self.arguments is not None:
            return (), dict(self.arguments)
        return (self.input,), {}

    @property
    def unknown_fields(self) -> list[str]:
        return sorted((self.model_extra or {}).keys())


_COMPONENT_FIELDS = ("input", "arguments", "expected_output", "output_match")
"""The fields only a component case has."""


def _given(case: EvalCase, key: str) -> bool:
    """Whether ``case`` gives ``key`` something other than its default (a case dumped
    whole writes every field out, defaults too)."""
    if key not in case.model_fields_set:
        return False
    default = EvalCase.model_fields[key].get_default(call_default_factory=True)
    return bool(getattr(case, key) != default)


_NOT_FOR_COMPONENTS = (
    "conversation_scenario",
    "end_state",
    "history",
    "next_step_only",
    "session_input",
    "tool_mocks",
    "unmocked_tools",
)
"""What a component case cannot have: it is a function called, not an agent's session."""


def as_text(value: Any) -> str:
    """A JSON value as a turn's text: a string as it is, anything else as its JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class EvalSet(FileModel):
    """A named collection of eval cases."""

    model_config = ConfigDict(extra="ignore")

    eval_set_id: str = Field(min_length=1)
    """The eval set's id: run folders are grouped under it."""
    name: str = ""
    """A readable name."""
    description: str = ""
    """What the eval set covers."""
    eval_cases: list[EvalCase]
    """The cases."""
    environment: EnvironmentSpec | None = None
    """The environment each trial of an agent case gets, set up before it and torn
    down after it (a function's ``module:attr`` or ``file.py:attr``, or ``{"function",
    "options"}``); a config's environment replaces it."""
    creation_timestamp: float | None = None
    """ADK bookkeeping; accepted, not used."""

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
