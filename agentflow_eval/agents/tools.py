"""Python functions offered to a model as OpenAI function tools.

The JSON schema a model sees is derived from the function itself: parameter types from the
type hints (through pydantic, so ``Literal``, ``Optional``, lists, dicts and pydantic models
all work), the tool description and parameter descriptions from the docstring (Google,
NumPy or reST style). Arguments a model sends are validated against the same model before
the function runs, so a wrong argument becomes a readable error for the model instead of a
crash.

Parameters named in :data:`INJECTED_PARAMS` are supplied by the agent at call time and are
never shown to the model. A parameter without a type hint is typed from its default when
the default is a JSON scalar (``str``, ``int``, ``float``, ``bool``), and as a string
otherwise: models send text, and a string is what an un-annotated parameter most often
holds. No warning is issued for this; annotate the parameter to be explicit.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError
from pydantic_core import to_jsonable_python

from agentflow_eval.agents.base import SessionContext, TrajectoryRecorder

__all__ = [
    "INJECTED_PARAMS",
    "Tool",
    "ToolArgumentsError",
    "ToolContext",
    "as_tool",
    "tool_result_text",
    "tool_schema",
]

INJECTED_PARAMS: frozenset[str] = frozenset(
    {"workdir", "recorder", "session", "state", "environment"}
)
"""Parameter names the agent fills in: the trial's directory (``Path``), the turn's
:class:`TrajectoryRecorder`, the :class:`SessionContext`, the session's mutable state
dict (initialised from ``session_input.state``), and the trial's own
:class:`~agentflow_eval.environments.environment.Environment` (``None`` when the run
sets up none)."""

_JSON_SCALARS = (str, int, float, bool)
_VALUE_KEYWORDS = frozenset({"default", "const", "enum", "examples"})


class ToolArgumentsError(ValueError):
    """The model's arguments do not fit the tool's parameters."""


@dataclass(frozen=True)
class ToolContext:
    """What the agent hands a tool besides the model's arguments. ``workdir`` is created
    when a tool that takes it is called."""

    workdir: Path
    recorder: TrajectoryRecorder
    session: SessionContext | None = None
    state: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Tool:
    """A Python function together with the schema a model sees for it."""

    fn: Callable[..., Any]
    name: str
    description: str
    parameters: dict[str, Any]
    arguments_model: type[BaseModel]
    injected: frozenset[str]

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> Tool:
        """Derive a tool from ``fn``'s signature, type hints and docstring."""
        if not callable(fn):
            raise TypeError(f"a tool must be a callable, got {type(fn).__name__}")
        tool_name: str = name or str(getattr(fn, "__name__", ""))
        if not tool_name.isidentifier():
            raise ValueError(
                f"tool name must be an identifier, got {tool_name!r}; pass name=... explicitly"
            )
        doc = docstring_parser.parse(inspect.getdoc(fn) or "")
        param_docs = {p.arg_name: (p.description or "").strip() for p in doc.params}
        model, injected = _arguments_model(fn, tool_name, param_docs)
        try:
            parameters = _clean_schema(model.model_json_schema())
        except (PydanticSchemaGenerationError, PydanticUserError) as exc:
            raise TypeError(f"tool {tool_name!r}: parameters have no JSON schema: {exc}") from exc
        if description is None:
            parts = [doc.short_description or "", doc.long_description or ""]
            description = "\n\n".join(p.strip() for p in parts if p and p.strip())
        return cls(
            fn=fn,
            name=tool_name,
            description=description,
            parameters=parameters,
            arguments_model=model,
            injected=injected,
        )

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI function-tool definition (``{"type": "function", "function": ...}``)."""
        function: dict[str, Any] = {"name": self.name, "parameters": self.parameters}
        if self.description:
            function["description"] = self.description
        return {"type": "function", "function": function}

    def validate(self, args: dict[str, Any]) -> dict[str, Any]:
        """Check and convert the model's arguments; raise :class:`ToolArgumentsError`."""
        try:
            parsed = self.arguments_model.model_validate(args)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ToolArgumentsError(f"invalid arguments for {self.name}: {problems}") from None
        return {name: getattr(parsed, name) for name in type(parsed).model_fields}

    async def call(self, args: dict[str, Any], context: ToolContext) -> Any:
        """Validate ``args``, add the injected parameters, and run the function.

        A synchronous function runs in a worker thread (with the caller's context
        variables) so a slow tool does not stall other trials.
        """
        kwargs = self.validate(args)
        available: dict[str, Any] = {
            "workdir": context.workdir,
            "recorder": context.recorder,
            "session": context.session,
            "state": context.state,
            "environment": context.session.environment if context.session else None,
        }
        if "workdir" in self.injected:  # made on first use: most trials never write files
            context.workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
        kwargs.update({name: available[name] for name in self.injected})
        if inspect.iscoroutinefunction(self.fn):
            return await self.fn(**kwargs)
        result = await asyncio.to_thread(self.fn, **kwargs)
        if inspect.isawaitable(result):
            return await result
        return result


def as_tool(value: Tool | Callable[..., Any]) -> Tool:
    """A :class:`Tool` as is, or one derived from a plain function."""
    return value if isinstance(value, Tool) else Tool.from_function(value)


def tool_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The OpenAI function-tool JSON schema of ``fn`` (see the module docstring)."""
    return Tool.from_function(fn).schema


def tool_result_text(result: Any) -> str:
    """A tool's return value as the text of a ``tool`` message: strings as they are,
    anything else as JSON (objects that JSON cannot hold fall back to their ``repr``)."""
    if isinstance(result, str):
        return result
    return json.dumps(to_jsonable_python(result, fallback=repr), ensure_ascii=False)


def _arguments_model(
    fn: Callable[..., Any], tool_name: str, param_docs: dict[str, str]
) -> tuple[type[BaseModel], frozenset[str]]:
    """A pydantic model of the parameters the model fills in, and the injected names."""
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # unresolvable forward references and the like
        raise TypeError(f"tool {tool_name!r}: cannot resolve type hints: {exc}") from exc
    fields: dict[str, Any] = {}
    injected: set[str] = set()
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(
                f"tool {tool_name!r}: *{param.name} / **{param.name} parameters cannot be "
                "described to a model; list the parameters explicitly"
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise TypeError(
                f"tool {tool_name!r}: parameter {param.name!r} is positional-only; tools are "
                "called with keyword arguments"
            )
        if param.name in INJECTED_PARAMS:
            injected.add(param.name)
            continue
        annotation = hints.get(param.name, _unannotated_type(param.default))
        description = param_docs.get(param.name) or None
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, Field(default, description=description))
    try:
        model = create_model(
            f"{tool_name}_arguments",
            __config__=ConfigDict(extra="forbid"),
            **fields,
        )
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
        raise TypeError(f"tool {tool_name!r}: unsupported parameter types: {exc}") from exc
    return model, frozenset(injected)


def _unannotated_type(default: Any) -> type:
    if default is not inspect.Parameter.empty and isinstance(default, _JSON_SCALARS):
        return type(default)
    return str


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's generated ``title`` keywords: noise in a prompt. Property *names*
    (which may well be ``title``) are kept."""

    def clean(node: Any, *, in_properties: bool = False) -> Any:
        if isinstance(node, list):
            return [clean(item) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if in_properties:
                out[key] = clean(value)
            elif key == "title" and isinstance(value, str):
                continue
            elif key in _VALUE_KEYWORDS:
                out[key] = value
            elif key in ("properties", "$defs"):
                out[key] = clean(value, in_properties=True)
            else:
                out[key] = clean(value)
        return out

    cleaned: dict[str, Any] = clean(schema)
    cleaned.setdefault("properties", {})
    return cleaned
