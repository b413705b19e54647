"""Errors in eval-set and config files, located the way their author wrote them.

A pydantic error location such as ``('evalCases', 0, 'conversation', 0,
'expected_tool_trajectory', 0, 'name')`` is turned into a :class:`Problem`: the case it
falls in (by the case's id in the raw data), and a field path that uses the file's own
keys (``intermediateData.toolUses[0].name``), even where a before-validator renamed them
(ADK's ``parts``, ``final_response``, ``intermediate_data``, ``invocation_events``,
legacy ``tool_name``). Unknown keys get a "did you mean" from :mod:`difflib`.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import AliasChoices, BaseModel, ValidationError
from pydantic.alias_generators import to_camel, to_snake
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import ErrorDetails

from agentflow_eval.errors import InputError
from agentflow_eval.files import adk
from agentflow_eval.models.config import CriteriaCatalogue, CriterionConfig
from agentflow_eval.models.evalset import EvalCase

__all__ = [
    "EVALSET_CASES",
    "CaseLayout",
    "EvalFileError",
    "Problem",
    "describe_kind",
    "did_you_mean",
    "known_keys",
    "problems_from_validation",
]

_MAX_LISTED_PROBLEMS = 20

_NOT_WRITTEN: type = SkipJsonSchema
"""The mark of a field the package sets, not a file (left out of "expected one of")."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a file: which case (``None`` outside a case), which field (a
    dotted/indexed path like ``conversation[0].user_content``, ``None`` for the whole
    file) and what is wrong."""

    message: str
    field: str | None = None
    case_id: str | None = None

    def describe(self) -> str:
        """``case 'x': field: message``, leaving out what is not known."""
        where = [f"case {self.case_id!r}"] if self.case_id is not None else []
        if self.field:
            where.append(self.field)
        return ": ".join([*where, self.message])


class EvalFileError(InputError):
    """An eval-set or config file that cannot be used.

    ``path``, ``case_id``, ``field`` and ``message`` describe the first problem;
    ``problems`` holds all of them. ``str()`` is one line for one problem, or a header
    line and one indented line per problem.
    """

    path: Path
    problems: list[Problem]
    case_id: str | None
    field: str | None
    message: str

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        case_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self._set(Path(path), [Problem(message=message, field=field, case_id=case_id)])

    @classmethod
    def from_problems(cls, path: str | Path, problems: Sequence[Problem]) -> EvalFileError:
        """An error for one or more problems in one file."""
        if not problems:
            raise ValueError("an EvalFileError needs at least one problem")
        error = cls.__new__(cls)
        error._set(Path(path), list(problems))
        return error

    def _set(self, path: Path, problems: list[Problem]) -> None:
        self.path = path
        self.problems = problems
        first = problems[0]
        self.case_id, self.field, self.message = first.case_id, first.field, first.message
        super().__init__(self._render())

    def _render(self) -> str:
        if len(self.problems) == 1:
            return f"{self.path}: {self.problems[0].describe()}"
        lines = [f"{self.path}: {len(self.problems)} problems:"]
        lines += [f"  {p.describe()}" for p in self.problems[:_MAX_LISTED_PROBLEMS]]
        if len(self.problems) > _MAX_LISTED_PROBLEMS:
            lines.append(f"  ... and {len(self.problems) - _MAX_LISTED_PROBLEMS} more")
        return "\n".join(lines)

    def __reduce__(self) -> tuple[Any, ...]:  # picklable, e.g. across Prefect workers
        return (EvalFileError.from_problems, (self.path, self.problems))


@dataclass(frozen=True)
class CaseLayout:
    """Where a file's cases sit: under one of the ``container`` keys (``None``: the file
    is a top-level list of cases), named by the first of ``id_keys`` that holds a
    non-empty string, each validated as ``case_type``."""

    container: tuple[str, ...] | None
    id_keys: tuple[str, ...]
    case_type: type[BaseModel]

    def cases(self, raw: Any) -> tuple[str | None, list[Any]]:
        """The key the cases sit under (``None`` for a top-level list) and the raw cases."""
        if self.container is None:
            return None, raw if isinstance(raw, list) else []
        if isinstance(raw, Mapping):
            for key in self.container:
                if key in raw:
                    cases = raw[key]
                    return key, cases if isinstance(cases, list) else []
        return None, []

    def case_id(self, case: Any) -> str | None:
        """The id a raw case gives itself, if any."""
        if isinstance(case, Mapping):
            for key in self.id_keys:
                value = case.get(key)
                if isinstance(value, str) and value:
                    return value
        return None


EVALSET_CASES = CaseLayout(("eval_cases", "evalCases"), ("eval_id", "evalId"), EvalCase)
"""Cases of an eval-set object, snake_case or camelCase."""


def problems_from_validation(
    error: ValidationError,
    raw: Any,
    root: Any,
    *,
    cases: CaseLayout | None = None,
    case_id: str | None = None,
    criteria: CriteriaCatalogue | None = None,
) -> list[Problem]:
    """One :class:`Problem` per error in ``error``, raised while validating ``raw`` (the
    data as it is written in the file) as type ``root``.

    With ``cases``, an error inside a case that has an id is reported against that case
    with a field path relative to it; ``case_id`` names the case of every problem when
    the whole file is one case (a legacy test file). With ``criteria``, a config entry's
    keys are those of its criterion's own options model (for "did you mean").
    """
    problems = []
    for detail in error.errors(include_url=False):
        own_case, loc, node, tp = _case_frame(tuple(detail["loc"]), raw, root, cases)
        where = _walk(loc, node, tp, criteria)
        problems.append(
            Problem(
                message=_message(detail, loc, where),
                field=where.path.removeprefix(".") or None,
                case_id=own_case or case_id,
            )
        )
    return problems


def first_reason(exc: ValueError) -> str:
    """Why ``exc`` refused a value, in a line: a pydantic ``ValidationError``'s first
    message (without pydantic's "Value error, "), else the message itself."""
    if isinstance(exc, ValidationError) and exc.errors():
        message = str(exc.errors(include_url=False)[0].get("msg", ""))
        for prefix in ("Value error, ", "Assertion failed, "):
            message = message.removeprefix(prefix)
        return message
    return " ".join(str(exc).split())


def did_you_mean(key: str, known: Sequence[str]) -> str:
    """``"; did you mean 'x'?"`` when ``key`` is close to one of ``known``, else ``""``."""
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def describe_kind(value: Any) -> str:
    """What kind of JSON value ``value`` is, for "found ..." messages."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return "an object" if isinstance(value, Mapping) else type(value).__name__


def known_keys(tp: Any) -> list[str]:
    """Every key a model (or union of models) accepts: field names, their camelCase
    aliases, alias choices, and ADK's names for them."""
    keys: set[str] = set()
    for model in _models(tp):
        for name, info in model.model_fields.items():
            keys |= {name, to_camel(name), *_choices(info.alias), *_choices(info.validation_alias)}
            keys |= {s.split(".")[0] for s in adk.ADK_FIELD_SYNONYMS.get(name, ())}
    return sorted(keys)


# ------------------------------------------------------------------ locating an error


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


def _case_frame(
    loc: tuple[Any, ...], raw: Any, root: Any, layout: CaseLayout | None
) -> tuple[str | None, tuple[Any, ...], Any, Any]:
    """Split an error location into (case id, location inside the case, the case's raw
    data, its type) when it falls inside a case that has an id; otherwise the location
    stays whole and names the case by index (``eval_cases[2].eval_id``)."""
    if layout is None:
        return None, loc, raw, root
    if layout.container is None:
        index, rest = (loc[0] if loc else None), loc[1:]
    elif len(loc) >= 2 and loc[0] in layout.container:
        index, rest = loc[1], loc[2:]
    else:
        return None, loc, raw, root
    _, raw_cases = layout.cases(raw)
    if isinstance(index, int) and 0 <= index < len(raw_cases):
        own_id = layout.case_id(raw_cases[index])
        if own_id is not None:
            return own_id, rest, raw_cases[index], layout.case_type
    return None, loc, raw, root


@dataclass
class _Where:
    """Where an error location lands in a file: the display path (keys as written), the
    raw value there (``_MISSING`` if absent), its parent's raw data, and the types the
    model expects at the parent and at the location."""

    path: str = ""
    value: Any = _MISSING
    parent: Any = None
    parent_type: Any = None
    value_type: Any = None


def _walk(
    loc: tuple[Any, ...], node: Any, tp: Any, criteria: CriteriaCatalogue | None = None
) -> _Where:
    """Follow ``loc`` through the raw data ``node`` (of model type ``tp``); ``criteria``
    says which model reads each config entry."""
    where = _Where(value=node, value_type=tp)
    i = 0
    while i < len(loc):
        seg = loc[i]
        member = _union_member(where.value_type, seg)
        if member is not None and not (isinstance(where.value, dict) and seg in where.value):
            where.value_type = member  # a tagged union's tag: not a key in the file
            i += 1
            continue
        where.parent, where.parent_type = where.value, where.value_type
        if isinstance(seg, int):
            where.path += f"[{seg}]"
            where.value = _index(where.parent, seg)
            where.value_type = _item_type(where.parent_type)
            i += 1
            continue
        name = _field_name(where.parent_type, seg)
        next_seg = loc[i + 1] if i + 1 < len(loc) else None
        if name == "expected_tool_trajectory" and isinstance(next_seg, int):
            parent = where.parent
            located = adk.locate_tool_call(parent, next_seg) if isinstance(parent, dict) else None
            if located is not None:  # written as ADK invocation_events
                where.path += f".{located[0]}"
                where.value = located[1]
                where.value_type = _item_type(_field_type(where.parent_type, seg))
                i += 2
                continue
        key, where.value = _find_key(where.parent, seg, name)
        where.path += f".{key}"
        where.value_type = _field_type(where.parent_type, seg)
        if criteria is not None and _is_criteria_entries(where.parent_type):
            where.value_type = criteria.options_model(seg, where.value)
        i += 1
        expanded = where.value is not _MISSING and not isinstance(where.value, dict | list)
        if i < len(loc) and expanded:
            break  # a shorthand scalar (``"calls_tool": "x"``) the model expanded
    return where


def _index(items: Any, index: int) -> Any:
    return items[index] if isinstance(items, list) and 0 <= index < len(items) else _MISSING


def _find_key(node: Any, seg: str, name: str | None) -> tuple[str, Any]:
    """The key path under which ``seg`` (model field ``name``) is written in ``node``,
    and its value; for a key that is absent, its name in the file's own style."""
    field_name = name or to_snake(seg)
    synonyms = adk.ADK_FIELD_SYNONYMS.get(field_name, ())
    if isinstance(node, dict):
        for candidate in (seg, field_name, to_camel(field_name), *synonyms):
            value = _get_dotted(node, candidate)
            if value is not _MISSING:
                return candidate, value
        if _is_camel_style(node):
            return to_camel(field_name), _MISSING
    return (field_name if name else seg), _MISSING


def _get_dotted(node: Mapping[str, Any], dotted: str) -> Any:
    value: Any = node
    for key in dotted.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _is_camel_style(node: Mapping[str, Any]) -> bool:
    keys = [k for k in node if isinstance(k, str)]
    return any(k != k.lower() for k in keys) and not any("_" in k for k in keys)


# --------------------------------------------------------------------- the message


def _message(detail: ErrorDetails, loc: tuple[Any, ...], where: _Where) -> str:
    """The error's message, saying what was expected and what the file holds."""
    kind = detail["type"]
    message = detail["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    if kind == "extra_forbidden":
        suggestion = did_you_mean(str(loc[-1]) if loc else "", known_keys(where.parent_type))
        if suggestion:
            return "unknown field" + suggestion
        listed = _field_names(where.parent_type)
        return "unknown field" + (f"; expected one of: {', '.join(listed)}" if listed else "")
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        if _is_model(where.value_type, CriterionConfig):
            message = "expected a threshold (a number) or an object of criterion options"
        else:
            message = "expected an object"
    if kind == "missing":
        return message + _misspelled(str(loc[-1]) if loc else "", where.parent, where.parent_type)
    if kind == "value_error" and isinstance(where.value, Mapping):
        return message + _misspelled_keys(where.value, where.value_type)
    if kind in ("too_short", "too_long"):
        return message
    # show the value as written in the file, not as a before-validator rewrote it
    shown = where.value if where.value is not _MISSING else detail.get("input", _MISSING)
    found = _found(shown)
    return f"{message}, found {found}" if found else message


def _unknown_keys(raw: Mapping[str, Any], tp: Any) -> list[str]:
    known = set(known_keys(tp))
    return [k for k in raw if isinstance(k, str) and k not in known] if known else []


def _misspelled(missing: str, parent: Any, tp: Any) -> str:
    """For a missing field: a hint naming an unknown key of ``parent`` that looks like a
    misspelling of it."""
    if not isinstance(parent, Mapping):
        return ""
    close = difflib.get_close_matches(missing, _unknown_keys(parent, tp), n=1, cutoff=0.6)
    return f" (found {close[0]!r}: a misspelling?)" if close else ""


def _misspelled_keys(raw: Mapping[str, Any], tp: Any) -> str:
    """For an object rejected as a whole: its unknown keys that look like misspellings."""
    known = known_keys(tp)
    hints = [f"{key!r}{did_you_mean(key, known)}" for key in _unknown_keys(raw, tp)]
    hints = [h for h in hints if "did you mean" in h]
    return f" (unknown key {', '.join(hints)})" if hints else ""


def _found(value: Any) -> str | None:
    """An offending input as shown after "found": scalars as written, a list by kind,
    nothing for an object (its keys are the field path already)."""
    if value is _MISSING or isinstance(value, Mapping):
        return None
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, list | tuple):
        return "a list"
    return None


# ------------------------------------------------------------- walking model types


def _alternatives(tp: Any) -> list[Any]:
    """An annotation's alternatives, with ``Annotated``, ``Optional`` and unions opened."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _alternatives(get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        return [alt for arg in get_args(tp) if arg is not type(None) for alt in _alternatives(arg)]
    return [tp]


def _models(tp: Any) -> list[type[BaseModel]]:
    return [
        alt for alt in _alternatives(tp) if isinstance(alt, type) and issubclass(alt, BaseModel)
    ]


def _is_model(tp: Any, model: type[BaseModel]) -> bool:
    return any(issubclass(m, model) for m in _models(tp))


def _union_member(tp: Any, seg: Any) -> type[BaseModel] | None:
    """The member of a tagged union of models that ``seg`` names as its tag."""
    members = _models(tp)
    if not isinstance(seg, str) or len(members) < 2:
        return None
    for model in members:
        tag = model.model_fields.get("type")
        if tag is not None and tag.default == seg:
            return model
    return None


def _is_criteria_entries(tp: Any) -> bool:
    """Whether ``tp`` is a config's ``criteria``: a dict of criterion entries."""
    return any(
        get_origin(alt) is dict and _is_model(get_args(alt)[1], CriterionConfig)
        for alt in _alternatives(tp)
    )


def _item_type(tp: Any) -> Any:
    for alt in _alternatives(tp):
        if get_origin(alt) in (list, tuple) and get_args(alt):
            return get_args(alt)[0]
    return None


def _field_name(tp: Any, seg: str) -> str | None:
    for model in _models(tp):
        for name, info in model.model_fields.items():
            if seg == name or seg == info.alias or seg in _choices(info.validation_alias):
                return name
    return None


def _field_type(tp: Any, seg: str) -> Any:
    for alt in _alternatives(tp):
        if get_origin(alt) is dict and len(get_args(alt)) == 2:
            return get_args(alt)[1]
    name = _field_name(tp, seg)
    for model in _models(tp):
        if name in model.model_fields:
            return model.model_fields[name].annotation
    return None


def _choices(alias: Any) -> list[str]:
    if isinstance(alias, str):
        return [alias]
    if isinstance(alias, AliasChoices):
        return [c for c in alias.choices if isinstance(c, str)]
    return []


def _field_names(tp: Any) -> list[str]:
    """The fields a file writes (not those kept out of the schema, set by the package)."""
    names = sorted(
        {
            name
            for model in _models(tp)
            for name, info in model.model_fields.items()
            if not any(isinstance(m, _NOT_WRITTEN) for m in info.metadata)
        }
    )
    return names if len(names) <= 15 else []
