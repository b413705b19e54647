"""The config file's JSON Schema, assembled from what the criteria declare: under
``criteria``, each built-in criterion's entry is a threshold or an object of its own
options model (so an editor completes and checks each criterion's options), and any other
name is a criterion of one's own (``function``, ``options``). Written, with the eval-set
schema, by ``agentflow-eval schema``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.registry import CriterionSpec, specs
from agentflow_eval.files.schemas import (
    CONFIG_SCHEMA_FILE,
    DIALECT,
    EVALSET_SCHEMA_FILE,
    FILE_MODELS,
    ID_PREFIX,
    SCHEMA_POINTER,
    Schema,
    allow_shorthands,
    describe_accepted_keys,
    evalset_json_schema,
    write_schema,
)
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.version import __version__

__all__ = ["config_json_schema", "write_schemas"]

_THRESHOLD: Schema = {"type": "number", "minimum": 0, "maximum": 1, "description": "The threshold."}

_STOP_SIGNAL: Schema = {
    "description": "ADK user-simulator criterion option; read by "
    "per_turn_user_simulator_quality_v1, elsewhere kept in options.stop_signal (a custom "
    "function criterion receives it).",
    "type": "string",
}


def _threshold_of(model: type[BaseModel]) -> Schema:
    """A bare threshold of ``model``'s entries: in [0, 1], or the range its ``threshold``
    field allows (a criterion on ADK's 1-to-5 scale)."""
    field = model.model_fields.get("threshold")
    bounds = {
        key: getattr(item, key)
        for item in (field.metadata if field is not None else [])
        for key in ("ge", "le")
        if getattr(item, key, None) is not None
    }
    low, high = bounds.get("ge", 0), bounds.get("le", 1)
    if (low, high) == (0, 1):
        return _THRESHOLD
    return {"type": "number", "minimum": low, "maximum": high, "description": "The threshold."}


def _entry(model: type[BaseModel], description: str) -> Schema:
    """A criteria entry: a bare threshold, or an object of ``model``."""
    return {
        "description": description,
        "anyOf": [_threshold_of(model), {"$ref": f"#/$defs/{model.__name__}"}],
    }


def _with_nested(models: dict[str, type[BaseModel]]) -> dict[str, type[BaseModel]]:
    """``models`` and every model their fields hold (``judge_model_options``...), by
    schema name."""
    found = dict(models)
    pending = list(models.values())
    while pending:
        for info in pending.pop().model_fields.values():
            kinds: list[Any] = [info.annotation]
            while kinds:
                kind = kinds.pop()
                kinds += get_args(kind)
                is_model = isinstance(kind, type) and issubclass(kind, BaseModel)
                if is_model and kind.__name__ not in found:
                    found[kind.__name__] = kind
                    pending.append(kind)
    return found


def _built_in(declared: list[CriterionSpec[Any]]) -> list[CriterionSpec[Any]]:
    """The declared criteria whose options have a model of their own (a factory
    registered without one takes its options as written)."""
    return [spec for spec in declared if spec.options is not CriterionConfig]


def config_json_schema() -> Schema:
    """The JSON Schema of an evaluation config file (native, or ADK test_config.json)."""
    declared = _built_in(specs())
    option_models: dict[str, type[BaseModel]] = {CriterionOptions.__name__: CriterionOptions}
    for spec in declared:
        option_models.setdefault(spec.options.__name__, spec.options)
    _, top = models_json_schema(
        [(EvalConfig, "validation"), *((m, "validation") for m in option_models.values())],
        by_alias=False,
    )
    defs: dict[str, Schema] = top["$defs"]
    defs.pop(CriterionConfig.__name__, None)  # entries are the criteria's own models
    describe_accepted_keys(defs, _with_nested({**FILE_MODELS, **option_models}))
    for name, model in option_models.items():
        properties = defs[name]["properties"]
        if "stop_signal" not in model.model_fields:
            properties["stop_signal"] = properties["stopSignal"] = _STOP_SIGNAL
    simulator = defs["UserSimulatorConfig"]["properties"]
    for key in ("max_allowed_invocations", "maxAllowedInvocations"):
        simulator[key]["anyOf"].append({"const": -1})  # ADK's "no limit"
    criteria = defs["EvalConfig"]["properties"]["criteria"]
    criteria["properties"] = {
        spec.name: _entry(spec.options, spec.description or f"The criterion {spec.name}.")
        for spec in declared
    }
    criteria["additionalProperties"] = _entry(
        CriterionOptions,
        "A criterion of one's own, named in a config by its function entry (or registered "
        "from Python).",
    )
    allow_shorthands(defs)
    root = defs.pop("EvalConfig")
    root["properties"]["$schema"] = SCHEMA_POINTER
    for key in ("live_model_config", "liveModelConfig"):
        root["properties"][key] = {
            "description": "ADK's live (bidirectional streaming) mode: not supported, ignored "
            "with a warning.",
            "anyOf": [{"type": "object"}, {"type": "null"}],
        }
    for key in ("custom_metrics", "customMetrics"):
        root["properties"][key] = {
            "description": "ADK custom metrics are refused unless empty; give the criterion "
            'a "function" entry instead.',
            "anyOf": [{"type": "object", "maxProperties": 0}, {"type": "null"}],
        }
    # ADK ignores top-level keys it does not know, and so does the loader (with a warning)
    root["additionalProperties"] = True
    return {
        "$schema": DIALECT,
        "$id": f"{ID_PREFIX}config",
        "title": "agentflow-eval config",
        "description": (
            "Which criteria judge a run, with their thresholds and options, plus run-wide "
            "defaults. Native configs and Google ADK test_config.json files. "
            f"agentflow-eval {__version__}."
        ),
        **{k: v for k, v in root.items() if k not in ("title", "description")},
        "$defs": dict(sorted(defs.items())),
    }


def write_schemas(directory: str | Path) -> list[Path]:
    """Write ``evalset.schema.json`` and ``config.schema.json`` into ``directory``
    (created if needed); return their paths."""
    return [
        write_schema(directory, EVALSET_SCHEMA_FILE, evalset_json_schema()),
        write_schema(directory, CONFIG_SCHEMA_FILE, config_json_schema()),
    ]
