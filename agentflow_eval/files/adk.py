"""Google ADK specifics: legacy ``*.test.json`` files, ``test_config.json`` quirks, where
ADK's names for things sit in a file, and writing an eval set back out in ADK's shape.

What is shared with native files (``parts``/``content``, ``final_response``,
``intermediate_data``, camelCase keys) is read by the models in
:mod:`agentflow_eval.models.evalset` themselves; this module holds what the models cannot
express: whole-file formats and ADK-only config keys.

**Legacy test files.** Before ``EvalSet``, an ADK ``*.test.json`` was a JSON list of
turns, ``{"query", "expected_tool_use": [{"tool_name", "tool_input"}], "reference"}``,
and the whole file was *one* multi-turn conversation. ADK converts such a file into an
eval set with one case (id = the file path, eval set id = a fresh UUID). We convert the
same way but with stable ids, the file's stem (``roll_die.test.json`` → ``roll_die``),
so results can be compared run to run. A turn without ``reference`` gets no expected
final response (response criteria report "not evaluated") rather than ADK's empty
string. The older list-of-cases format, ``[{"name", "data": [turns],
"initial_session"}]``, gives one case per entry, named by ``name``.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agentflow_eval.errors import InputError
from agentflow_eval.models.config import CriteriaCatalogue
from agentflow_eval.models.evalset import (
    ContentPart,
    EvalCase,
    EvalSet,
    Invocation,
    Message,
    Rubric,
)

__all__ = [
    "ADK_FIELD_SYNONYMS",
    "AdkFormatError",
    "LegacyAgentResponse",
    "LegacyCase",
    "LegacyConversion",
    "LegacyToolUse",
    "LegacyTurn",
    "NormalisedConfig",
    "is_legacy_case_list",
    "legacy_to_evalset",
    "locate_tool_call",
    "normalise_config",
    "to_adk_evalset",
]


class AdkFormatError(InputError):
    """A part of an ADK file that this package reads but cannot accept, with where it is
    (a dotted ``field`` path) and why."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


# --------------------------------------------------------------------------- legacy files


class _LegacyModel(BaseModel):
    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)


class LegacyToolUse(_LegacyModel):
    """An expected tool call in a legacy test file. Other keys (ADK's old
    ``mock_tool_output``) are accepted and not used."""

    tool_name: str = Field(min_length=1)
    """The tool's name."""
    tool_input: dict[str, Any] = Field(default_factory=dict)
    """The arguments expected."""


class LegacyAgentResponse(_LegacyModel):
    """An expected intermediate response of a (sub-)agent in a legacy test file."""

    author: str
    """The (sub-)agent that said it."""
    text: str
    """What it said."""


class LegacyTurn(_LegacyModel):
    """One row of a legacy ``*.test.json`` file: one user turn of the conversation."""

    query: str
    """What the user says."""
    reference: str | None = None
    """The reference answer."""
    expected_tool_use: list[LegacyToolUse] = Field(default_factory=list)
    """The tool calls a good run makes in this turn."""
    expected_intermediate_agent_responses: list[LegacyAgentResponse] = Field(default_factory=list)
    """Text the agent is expected to say between tool calls (reported, not scored)."""


class LegacyCase(_LegacyModel):
    """One entry of the old list-of-cases eval set format."""

    name: str = Field(min_length=1)
    """The case's id."""
    data: list[LegacyTurn] = Field(min_length=1)
    """The case's turns, in order."""
    initial_session: dict[str, Any] = Field(default_factory=dict)
    """The session's initial state."""


_LEGACY_TURNS = TypeAdapter(list[LegacyTurn])
"""A legacy test file: a list of turns that together make one conversation."""

_LEGACY_CASES = TypeAdapter(list[LegacyCase])
"""The old list-of-cases eval set format."""


@dataclass(frozen=True)
class LegacyConversion:
    """A legacy file turned into eval-set data, plus the keys it had that ADK never read
    (``(case_id, field path)`` pairs, e.g. ``("roll_die", "[0].refrence")``)."""

    data: dict[str, Any]
    unknown_keys: list[tuple[str, str]] = field(default_factory=list)


def is_legacy_case_list(raw: Sequence[Any]) -> bool:
    """Whether a top-level list is the list-of-cases format rather than a list of turns."""
    return bool(raw) and all(isinstance(item, dict) and "data" in item for item in raw)


def legacy_to_evalset(
    raw: Sequence[Any],
    *,
    eval_set_id: str,
    initial_session: Mapping[str, Any] | None = None,
) -> LegacyConversion:
    """Eval-set data (ADK's snake_case shape) from a legacy file's top-level list.

    ``eval_set_id`` names the set and, for a list of turns, its one case.
    ``initial_session`` (ADK's ``initial_session_file`` contents: ``app_name``,
    ``user_id``, ``state``) becomes the session of cases that have none of their own.
    Raises :class:`pydantic.ValidationError` with locations into ``raw``.
    """
    unknown: list[tuple[str, str]] = []
    cases: list[dict[str, Any]] = []
    if is_legacy_case_list(raw):
        for case in _LEGACY_CASES.validate_python(raw):
            session = case.initial_session or initial_session
            cases.append(_legacy_case(case.name, case.data, session))
            unknown += [(case.name, f"data{path}") for path in _unknown_turn_keys(case.data)]
            unknown += [(case.name, key) for key in sorted(case.model_extra or {})]
    else:
        turns = _LEGACY_TURNS.validate_python(raw)
        cases.append(_legacy_case(eval_set_id, turns, initial_session))
        unknown += [(eval_set_id, path) for path in _unknown_turn_keys(turns)]
    data = {"eval_set_id": eval_set_id, "name": eval_set_id, "eval_cases": cases}
    return LegacyConversion(data=data, unknown_keys=unknown)


def _legacy_case(
    eval_id: str, turns: Sequence[LegacyTurn], session: Mapping[str, Any] | None
) -> dict[str, Any]:
    case: dict[str, Any] = {"eval_id": eval_id, "conversation": [_legacy_turn(t) for t in turns]}
    if session:
        case["session_input"] = {
            "app_name": session.get("app_name", ""),
            "user_id": session.get("user_id", ""),
            "state": dict(session.get("state") or {}),
        }
    return case


def _legacy_turn(turn: LegacyTurn) -> dict[str, Any]:
    invocation: dict[str, Any] = {
        "user_content": {"role": "user", "parts": [{"text": turn.query}]},
        "intermediate_data": {
            "tool_uses": [
                {"name": t.tool_name, "args": t.tool_input} for t in turn.expected_tool_use
            ],
            "intermediate_responses": [
                [r.author, [{"text": r.text}]] for r in turn.expected_intermediate_agent_responses
            ],
        },
    }
    if turn.reference is not None:
        invocation["final_response"] = {"role": "model", "parts": [{"text": turn.reference}]}
    return invocation


def _unknown_turn_keys(turns: Sequence[LegacyTurn]) -> list[str]:
    return [
        f"[{i}].{key}" for i, turn in enumerate(turns) for key in sorted(turn.model_extra or {})
    ]


# ------------------------------------------------------------------ where ADK names sit

ADK_FIELD_SYNONYMS: dict[str, tuple[str, ...]] = {
    "user_content": ("query",),
    "expected_final_response": ("final_response", "finalResponse", "reference"),
    "expected_tool_trajectory": (
        "intermediate_data.tool_uses",
        "intermediateData.toolUses",
        "expected_tool_use",
    ),
    "expected_intermediate_responses": (
        "intermediate_data.intermediate_responses",
        "intermediateData.intermediateResponses",
    ),
    "expected_tool_responses": (
        "intermediate_data.tool_responses",
        "intermediateData.toolResponses",
    ),
    "content": ("parts",),
    "name": ("tool_name", "toolName"),
    "args": ("arguments", "tool_input", "toolInput"),
}
"""Where a model field's value may sit in a file under ADK's (or a legacy) name: the
field name (snake_case) → dotted key paths, first match wins. Used to point error
messages at the key the author actually wrote."""


def locate_tool_call(invocation: Mapping[str, Any], index: int) -> tuple[str, Any] | None:
    """The key path (relative to the invocation) and raw value of the ``index``-th
    expected tool call when it is written in ADK's ``intermediate_data.invocation_events``
    form, e.g. ``intermediate_data.invocation_events[1].content.parts[0].function_call``."""
    for data_key in ("intermediate_data", "intermediateData"):
        intermediate = invocation.get(data_key)
        if not isinstance(intermediate, Mapping):
            continue
        for events_key in ("invocation_events", "invocationEvents"):
            events = intermediate.get(events_key)
            if not isinstance(events, list):
                continue
            seen = 0
            for e, event in enumerate(events):
                content = event.get("content") if isinstance(event, Mapping) else None
                parts = content.get("parts") if isinstance(content, Mapping) else None
                for p, part in enumerate(parts if isinstance(parts, list) else []):
                    if not isinstance(part, Mapping):
                        continue
                    for call_key in ("function_call", "functionCall"):
                        if part.get(call_key):
                            if seen == index:
                                path = f"{data_key}.{events_key}[{e}].content.parts[{p}].{call_key}"
                                return path, part[call_key]
                            seen += 1
    return None


# ------------------------------------------------------------------------ test_config.json

_ADK_ONLY_CRITERION_KEYS = ("stop_signal", "stopSignal")

_IGNORED_CONFIG_KEYS: dict[str, str] = {
    "live_model_config": "live (bidirectional streaming) evaluation is not supported",
    "liveModelConfig": "live (bidirectional streaming) evaluation is not supported",
}
"""ADK config keys this package accepts and does not use, with why."""

_JUDGE_SETTINGS_USED = frozenset({"temperature", "max_output_tokens", "maxOutputTokens", "seed"})


@dataclass(frozen=True)
class NormalisedConfig:
    """Config data ready for :class:`~agentflow_eval.models.config.EvalConfig`, and what
    was accepted without being used (one line per key, naming it)."""

    data: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def normalise_config(
    raw: Mapping[str, Any],
    known_keys: Sequence[str],
    criteria: CriteriaCatalogue | None = None,
) -> NormalisedConfig:
    """Config data with ADK-only keys put where the config model reads them. The input
    is not modified.

    - ``$schema`` (an editor's pointer to the JSON Schema) is dropped.
    - A top-level key the model does not know (``known_keys``) is dropped with a warning,
      as ADK ignores such keys (``evaluation_settings``), unless it looks like a
      misspelling of a known key: that one is left for validation to refuse.
      ``live_model_config`` is dropped with a warning too: live mode is not supported.
    - A criterion's ``stop_signal`` (ADK's user-simulator criterion) is read by a
      criterion whose options have it (``per_turn_user_simulator_quality_v1``);
      elsewhere it moves into the entry's ``options``, for a function of one's own.
    - ``custom_metrics`` is refused with :class:`AdkFormatError`: ADK's custom metric
      functions take ADK's evaluator arguments, which this package does not provide.
    - With the ``criteria`` catalogue, what a criterion accepts without using (ADK's
      ``include_intermediate_responses_in_final`` where the criterion does not read it)
      is named in a warning.
    """
    data = {k: copy.deepcopy(v) for k, v in raw.items() if k != "$schema"}
    warnings: list[str] = []
    for key in ("custom_metrics", "customMetrics"):
        if data.get(key):
            names = ", ".join(sorted(data[key])) if isinstance(data[key], dict) else ""
            raise AdkFormatError(
                "ADK custom metrics (code_config) are not supported: they implement ADK's "
                "evaluator interface. Give the criterion a "
                '"function": "package.module:attr" entry in "criteria" instead'
                + (f" (found: {names})" if names else ""),
                field=key,
            )
        data.pop(key, None)
    for key in list(data):
        if key in _IGNORED_CONFIG_KEYS:
            value = data.pop(key)
            if value is not None:
                warnings.append(f"{key} is ignored: {_IGNORED_CONFIG_KEYS[key]}")
        elif key not in known_keys and not difflib.get_close_matches(
            key, known_keys, n=1, cutoff=0.75
        ):
            data.pop(key)
            warnings.append(f"unknown key {key!r} is ignored (as ADK ignores it)")
    entries = data.get("criteria")
    if isinstance(entries, dict):
        for name, options in entries.items():
            if not isinstance(options, dict):
                continue
            reads_it = criteria is not None and "stop_signal" in (
                criteria.options_model(name, options).model_fields
            )
            for key in _ADK_ONLY_CRITERION_KEYS:
                if key in options and reads_it:
                    options.setdefault("stop_signal", options.pop(key))
                elif key in options:
                    if not options.get("function"):
                        warnings.append(
                            f"criteria.{name}.{key} is not used: only "
                            "per_turn_user_simulator_quality_v1 reads it (the simulated user "
                            "ends a conversation with </finished>)"
                        )
                    extra = options.setdefault("options", {})
                    if isinstance(extra, dict):
                        extra.setdefault("stop_signal", options.pop(key))
            own = criteria.entry_warnings(name, options) if criteria is not None else []
            warnings += [f"criteria.{name}.{w}" for w in [*own, *_criterion_warnings(options)]]
    simulator = data.get("user_simulator_config", data.get("userSimulatorConfig"))
    if isinstance(simulator, dict):
        warnings += [f"user_simulator_config.{w}" for w in _simulator_warnings(simulator)]
    return NormalisedConfig(data=data, warnings=warnings)


def _get(options: Mapping[str, Any], snake: str) -> Any:
    return options.get(snake, options.get(_camel(snake)))


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(word.title() for word in rest)


def _criterion_warnings(options: Mapping[str, Any]) -> list[str]:
    """ADK judge options of one criterion that are accepted and not used."""
    out = []
    judge = _get(options, "judge_model_options")
    if isinstance(judge, Mapping):
        limit = _get(judge, "parallelism_limit")
        if limit not in (None, 1):
            out.append(
                "judge_model_options.parallelism_limit is not used: the run's "
                "judge.max_concurrency limits judge calls"
            )
        settings = _get(judge, "judge_model_config")
        if isinstance(settings, Mapping):
            unused = sorted(
                k for k, v in settings.items() if v is not None and k not in _JUDGE_SETTINGS_USED
            )
            if unused:
                out.append(
                    f"judge_model_config: {', '.join(unused)} not used (only temperature, "
                    "max_output_tokens and seed are passed to the judge)"
                )
    return out


_AUDIO_SIMULATOR_KEYS = ("audio_model", "audio_model_configuration", "include_text_with_audio")
"""ADK's ``llm_audio`` simulator options (text-to-speech of the simulated user's turns)."""


def _simulator_warnings(settings: Mapping[str, Any]) -> list[str]:
    """ADK user-simulator options that are accepted and not used."""
    out = []
    if settings.get("type") == "llm_audio":
        out.append("type 'llm_audio' is not supported: the simulated user writes text")
    audio = [key for key in _AUDIO_SIMULATOR_KEYS if _get(settings, key) is not None]
    if audio:
        out.append(f"{', '.join(audio)} not used: the simulated user writes text")
    if _get(settings, "custom_instructions"):
        out.append("custom_instructions is not used: the simulated user has its own prompt")
    if _get(settings, "include_function_calls") is True:
        out.append("include_function_calls is not used: the simulated user sees text only")
    model_settings = _get(settings, "model_configuration")
    if isinstance(model_settings, Mapping):
        unused = sorted(
            k for k, v in model_settings.items() if v is not None and k != "temperature"
        )
        if unused:
            out.append(f"model_configuration: {', '.join(unused)} not used (only temperature is)")
    return out


# ------------------------------------------------------------------------------- writing


def to_adk_evalset(eval_set: EvalSet) -> dict[str, Any]:
    """``eval_set`` as ADK eval-set JSON data, in the snake_case shape ADK's own
    ``LocalEvalSetsManager`` writes (``user_content.parts``, ``final_response``,
    ``intermediate_data.tool_uses``; nulls and empty defaults left out).

    Roles: a native ``assistant`` message is written as ADK's ``model``. Fields ADK does
    not define (case ``expectations``, ``metadata``, ``context``, tool mocks, a seeded
    ``history``, a case's own extra keys) are written too: ADK's ``EvalCase`` keeps
    unknown keys, and so :func:`~agentflow_eval.files.loading.load_evalset` reads the file
    back to the same set. A component case is no ADK case: leave it out first.
    """
    out: dict[str, Any] = {"eval_set_id": eval_set.eval_set_id}
    if eval_set.name:
        out["name"] = eval_set.name
    if eval_set.description:
        out["description"] = eval_set.description
    out["eval_cases"] = [_case(case) for case in eval_set.eval_cases]
    if eval_set.creation_timestamp is not None:
        out["creation_timestamp"] = eval_set.creation_timestamp
    return out


def _case(case: EvalCase) -> dict[str, Any]:
    out: dict[str, Any] = {"eval_id": case.eval_id}
    if case.conversation_scenario is not None:
        out["conversation_scenario"] = case.conversation_scenario.model_dump(exclude_none=True)
    else:
        out["conversation"] = [_invocation(inv) for inv in case.conversation]
    if case.session_input is not None:
        out["session_input"] = case.session_input.model_dump(exclude_none=True)
    if case.rubrics:
        out["rubrics"] = [_rubric(r) for r in case.rubrics]
    if case.final_session_state is not None:
        out["final_session_state"] = case.final_session_state
    if case.creation_timestamp is not None:
        out["creation_timestamp"] = case.creation_timestamp
    if case.expectations:
        out["expectations"] = [e.model_dump() for e in case.expectations]
    if case.context is not None:
        out["context"] = case.context
    if case.metadata:
        out["metadata"] = case.metadata
    if case.tool_mocks:
        out["tool_mocks"] = [m.model_dump(exclude_unset=True) for m in case.tool_mocks]
    if case.unmocked_tools is not None:
        out["unmocked_tools"] = case.unmocked_tools
    if case.history:
        out["history"] = [m.model_dump(exclude_unset=True, exclude_none=True) for m in case.history]
    if case.next_step_only:
        out["next_step_only"] = True
    out.update(case.model_extra or {})
    return out


def _invocation(inv: Invocation) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if inv.invocation_id:
        out["invocation_id"] = inv.invocation_id
    out["user_content"] = _content(inv.user_content)
    if inv.expected_final_response is not None:
        # The answer is the model's, whatever role a plain-text reference was given.
        out["final_response"] = {**_content(inv.expected_final_response), "role": "model"}
    out["intermediate_data"] = {
        "tool_uses": [call.model_dump(exclude_none=True) for call in inv.expected_tool_trajectory],
        "intermediate_responses": [
            [_adk_role(m.role), [_part(p) for p in m.content]]
            for m in inv.expected_intermediate_responses
        ],
    }
    if inv.expected_tool_responses:
        out["intermediate_data"]["tool_responses"] = list(inv.expected_tool_responses)
    if inv.rubrics:
        out["rubrics"] = [_rubric(r) for r in inv.rubrics]
    for key in (
        "creation_timestamp",
        "app_details",
        "inference_call_count",
        "duration",
        "model_duration",
        "tool_duration",
    ):
        value = getattr(inv, key)
        if value is not None:
            out[key] = value
    return out


def _content(message: Message) -> dict[str, Any]:
    return {"role": _adk_role(message.role), "parts": [_part(p) for p in message.content]}


def _adk_role(role: str) -> str:
    return "model" if role == "assistant" else role


def _part(part: ContentPart) -> dict[str, Any]:
    if part.type == "text":
        extra = {k: v for k, v in (part.model_extra or {}).items() if v is not None}
        return {"text": part.text or "", **extra}
    # A non-text ADK part (function_call, inline_data, ...) is written as it was read; its
    # ``type`` was inferred from its one key and ADK's Part has no such field.
    data = part.model_dump(exclude_none=True)
    if part.type in data and part.type != "type":
        data.pop("type")
    return data


def _rubric(rubric: Rubric) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rubric_id": rubric.rubric_id,
        "rubric_content": {"text_property": rubric.rubric_content},
    }
    if rubric.description is not None:
        out["description"] = rubric.description
    if rubric.type is not None:
        out["type"] = rubric.type
    return out
