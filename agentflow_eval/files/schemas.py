"""JSON Schemas for eval-set and config files, so editors can complete and check them.

The schemas start from the pydantic models (validation mode) and then describe what
the loaders really accept, which the models' own schemas cannot show because
before-validators do the work: each field under its snake_case name *and* its camelCase
alias, ADK's names (``parts``, ``final_response``, ``reference``, ``query``,
``intermediate_data`` with ``tool_uses`` or ``invocation_events``, ``tool_name``/
``tool_input``), string shorthands for messages and case expectations, bare-number
criteria, nulls where ADK writes them, and the legacy ADK test-file lists. A file may
point at its schema with a top-level ``"$schema"`` key; the loaders ignore that key.

The config file's schema is assembled from the criteria's own options models, so it is
made above the criteria (:mod:`agentflow_eval.criteria.config_schema`), with the helpers
here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel
from pydantic.json_schema import models_json_schema

from agentflow_eval.files import adk
from agentflow_eval.models.config import EvalConfig, JudgeSettings, UserSimulatorConfig
from agentflow_eval.models.evalset import (
    CallsTool,
    Completes,
    ContentPart,
    ConversationScenario,
    EvalCase,
    EvalSet,
    FinalContains,
    Invocation,
    Message,
    Rubric,
    SessionInput,
    ToolCall,
)
from agentflow_eval.version import __version__

__all__ = [
    "CONFIG_SCHEMA_FILE",
    "DIALECT",
    "EVALSET_SCHEMA_FILE",
    "FILE_MODELS",
    "ID_PREFIX",
    "SCHEMA_POINTER",
    "Schema",
    "allow_shorthands",
    "describe_accepted_keys",
    "evalset_json_schema",
    "write_schema",
]

EVALSET_SCHEMA_FILE = "evalset.schema.json"
CONFIG_SCHEMA_FILE = "config.schema.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"
ID_PREFIX = "urn:agentflow-eval:schema:"

Schema = dict[str, Any]

FILE_MODELS: dict[str, type[BaseModel]] = {
    model.__name__: model
    for model in (
        EvalSet,
        EvalCase,
        Invocation,
        Message,
        ContentPart,
        ToolCall,
        Rubric,
        SessionInput,
        ConversationScenario,
        Completes,
        CallsTool,
        FinalContains,
        EvalConfig,
        JudgeSettings,
        UserSimulatorConfig,
    )
}
"""The file-format models whose schemas are described, by their schema name (a config's
criteria options models are added by the config schema)."""

# Keys that a model's before-validator reads in place of one of its fields.
_SYNONYMS: dict[str, dict[str, tuple[str, ...]]] = {
    "Message": {"content": ("parts",)},
    "Invocation": {
        "user_content": ("query",),
        "expected_final_response": ("final_response", "finalResponse", "reference"),
        "expected_tool_trajectory": ("expected_tool_use",),
    },
}

# Fields where the models turn a null into their default (ADK writes these nulls).
_NULLABLE: dict[str, tuple[str, ...]] = {
    "EvalSet": ("name", "description"),
    "EvalCase": ("conversation", "rubrics"),
    "Invocation": ("rubrics",),
    "Message": ("role", "content"),
    "ToolCall": ("args",),
}


def evalset_json_schema() -> Schema:
    """The JSON Schema of an eval-set file: an eval set object (native or ADK), or a
    legacy ADK test file (a list of turns, or a list of cases)."""
    _, top = models_json_schema(
        [(EvalSet, "validation"), (adk.LegacyTurn, "validation"), (adk.LegacyCase, "validation")],
        by_alias=False,
    )
    defs: dict[str, Schema] = top["$defs"]
    defs.update(_adk_intermediate_defs())
    describe_accepted_keys(defs, FILE_MODELS)
    allow_shorthands(defs)
    defs["EvalSet"]["properties"]["$schema"] = SCHEMA_POINTER
    return {
        "$schema": DIALECT,
        "$id": f"{ID_PREFIX}evalset",
        "title": "agentflow-eval eval set",
        "description": (
            "An eval set: cases, each a conversation (or a simulated-user scenario) and what "
            "a good run looks like. Native files and Google ADK *.evalset.json / "
            f"*.test.json files, snake_case or camelCase. agentflow-eval {__version__}."
        ),
        "anyOf": [
            {"$ref": "#/$defs/EvalSet"},
            {
                "description": "Legacy ADK test file: turns of one conversation.",
                "type": "array",
                "minItems": 1,
                "items": {"$ref": "#/$defs/LegacyTurn"},
            },
            {
                "description": "Legacy ADK eval set: a list of named cases.",
                "type": "array",
                "minItems": 1,
                "items": {"$ref": "#/$defs/LegacyCase"},
            },
        ],
        "$defs": dict(sorted(defs.items())),
    }


def write_schema(directory: str | Path, name: str, schema: Schema) -> Path:
    """Write ``schema`` as ``name`` into ``directory`` (created if needed)."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- helpers

SCHEMA_POINTER: Schema = {"type": "string", "description": "This file's JSON Schema."}


def describe_accepted_keys(defs: dict[str, Schema], models: Mapping[str, type[BaseModel]]) -> None:
    """Add every other key a model (``models``, by schema name) accepts for a field
    (camelCase alias, alias choices, ADK synonyms) as a property, and let any one of them
    satisfy ``required``."""
    for name, schema in defs.items():
        model = models.get(name)
        properties = schema.get("properties")
        if model is None or properties is None:
            continue
        alternatives = {field: _other_keys(model, field) for field in list(properties)}
        for field, others in alternatives.items():
            if field in _NULLABLE.get(name, ()):
                properties[field] = _nullable(properties[field])
            for other in others:
                properties.setdefault(other, _alias_of(properties[field], field))
        required = schema.pop("required", [])
        plain = [f for f in required if not alternatives.get(f)]
        if plain:
            schema["required"] = plain
        either = [
            {"anyOf": [{"required": [key]} for key in (f, *alternatives[f])]}
            for f in required
            if alternatives.get(f)
        ]
        if either:
            schema["allOf"] = either


def _other_keys(model: type[BaseModel], field: str) -> list[str]:
    info = model.model_fields.get(field)
    if info is None:
        return []
    keys = [info.alias] if isinstance(info.alias, str) else []
    if isinstance(info.validation_alias, str):
        keys.append(info.validation_alias)
    elif isinstance(info.validation_alias, AliasChoices):
        keys += [c for c in info.validation_alias.choices if isinstance(c, str)]
    keys += _SYNONYMS.get(model.__name__, {}).get(field, ())
    return [k for k in dict.fromkeys(keys) if k != field]


def _alias_of(schema: Schema, field: str) -> Schema:
    alias = copy.deepcopy(schema)
    alias["description"] = f"Same as {field}."
    alias.pop("title", None)
    return alias


def _nullable(schema: Schema) -> Schema:
    if any(alt.get("type") == "null" for alt in schema.get("anyOf", [])):
        return schema
    outer = {k: v for k, v in schema.items() if k in ("title", "description", "default")}
    inner = {k: v for k, v in schema.items() if k not in outer}
    return {**outer, "anyOf": [inner, {"type": "null"}]}


def allow_shorthands(defs: dict[str, Schema]) -> None:
    """The string forms the models expand: a message or a part as plain text, a rubric's
    text directly or as ADK's ``{"text_property": ...}``, case expectations as
    ``"completes"``, ``{"calls_tool": name}`` or ``{"final_contains": text}``."""
    for name, description in (
        ("Message", "A message, or its text alone (a user message)."),
        ("ContentPart", "A part of a message, or its text alone."),
    ):
        if name in defs:
            defs[name] = {
                "description": description,
                "anyOf": [{"type": "string"}, defs[name]],
            }
    if "Rubric" in defs:
        text = {"type": "string", "description": "The rubric's text."}
        text_property: Schema = {
            "type": "object",
            "properties": {"text_property": text, "textProperty": text},
        }
        for key in ("rubric_content", "rubricContent"):
            described = defs["Rubric"]["properties"][key].get("description")
            defs["Rubric"]["properties"][key] = {
                "anyOf": [{"type": "string"}, text_property],
                **({"description": described} if described else {}),
            }
    if "EvalCase" in defs:
        prop = defs["EvalCase"]["properties"]["expectations"]
        prop["items"] = {
            "anyOf": [
                {"const": "completes"},
                _single_key("calls_tool", "callsTool", "The agent called this tool."),
                _single_key("final_contains", "finalContains", "The answer has this text."),
                prop["items"],
            ]
        }
    if "ToolCall" in defs:
        for key in ("partial_args", "partialArgs", "will_continue", "willContinue"):
            defs["ToolCall"]["properties"][key] = {
                "type": "null",
                "description": "Written as null by ADK's dumps; ignored.",
            }
    if "Invocation" in defs:
        properties = defs["Invocation"]["properties"]
        for key in ("intermediate_data", "intermediateData"):
            properties[key] = {
                "anyOf": [{"$ref": "#/$defs/AdkIntermediateData"}, {"type": "null"}],
                "description": "ADK's expected tool calls and intermediate responses.",
            }


def _single_key(snake: str, camel: str, description: str) -> Schema:
    return {
        "description": description,
        "type": "object",
        "minProperties": 1,
        "maxProperties": 1,
        "properties": {
            snake: {"type": "string", "description": description},
            camel: {"type": "string", "description": description},
        },
        "additionalProperties": False,
    }


def _adk_intermediate_defs() -> dict[str, Schema]:
    tool_calls: Schema = {
        "description": "The tool calls a good run makes in this turn.",
        "type": "array",
        "items": {"$ref": "#/$defs/ToolCall"},
    }
    responses: Schema = {
        "description": "Text the agent is expected to say between tool calls.",
        "type": "array",
        "items": {
            "anyOf": [
                {
                    "description": "[author, parts]",
                    "type": "array",
                    "prefixItems": [
                        {"type": "string"},
                        {"type": "array", "items": {"$ref": "#/$defs/ContentPart"}},
                    ],
                    "minItems": 2,
                    "maxItems": 2,
                },
                {"$ref": "#/$defs/Message"},
            ]
        },
    }
    events: Schema = {
        "description": "The turn's events; their parts' function calls and text.",
        "type": "array",
        "items": {"$ref": "#/$defs/AdkInvocationEvent"},
    }
    return {
        "AdkIntermediateData": {
            "title": "AdkIntermediateData",
            "description": (
                "What the agent is expected to do between the user turn and the final "
                "response: tool_uses and intermediate_responses, or invocation_events whose "
                "parts hold function calls and text."
            ),
            "type": "object",
            "properties": {
                "tool_uses": tool_calls,
                "toolUses": tool_calls,
                "tool_responses": {"type": "array", "description": "Kept, not judged."},
                "toolResponses": {"type": "array", "description": "Kept, not judged."},
                "intermediate_responses": responses,
                "intermediateResponses": responses,
                "invocation_events": events,
                "invocationEvents": events,
            },
            "additionalProperties": False,
        },
        "AdkInvocationEvent": {
            "title": "AdkInvocationEvent",
            "type": "object",
            "properties": {
                "author": {"type": "string", "description": "Who produced the event."},
                "content": {
                    "anyOf": [{"$ref": "#/$defs/Message"}, {"type": "null"}],
                    "description": "The event's message: function calls and text parts.",
                },
            },
        },
    }
