"""The run request's fields as the run commands' flags, and the request made of them.

Every field with a :class:`~agentflow_eval.models.request.Flag` is a flag, spelled as its
``Flag`` says (``--`` and the field's name, then older spellings), its help and metavar
from there too; an S3 option is ``--s3-`` and its name. A value is checked the way the
request checks it (the field's own validators), so a flag and the form refuse the same
things in the same words. A flag not given is ``None``: the request's default applies,
or, on a resume, what the run was started with.
"""

from __future__ import annotations

import argparse
import types
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError

from agentflow_eval.cli.common import one_line
from agentflow_eval.models.request import RunRequest, S3Options, flag_of

__all__ = [
    "add_request_flags",
    "report_file_of",
    "request_fields_given",
    "request_from_flags",
    "settings_table",
]

_S3 = "s3"


def add_request_flags(
    parser: argparse.ArgumentParser,
    fields: Iterable[str],
    model: type[BaseModel] = RunRequest,
) -> None:
    """Add the flags of the request's ``fields`` (``"s3"``: every S3 option's) to
    ``parser``; ``model`` is the request they are fields of (a sibling of the run
    request: the traces request)."""
    for name in fields:
        if name == _S3:
            for option in S3Options.model_fields:
                _add(parser, S3Options, option, prefix=_S3)
        else:
            _add(parser, model, name)


def _add(
    parser: argparse.ArgumentParser, model: type[BaseModel], name: str, prefix: str = ""
) -> None:
    flag = flag_of(model, name)
    if flag is None:
        return
    dest = f"{prefix}_{name}" if prefix else name
    annotation = model.model_fields[name].annotation
    options: dict[str, Any] = {"dest": dest, "default": None, "help": flag.help}
    if annotation is bool:
        options["action"] = "store_const"
        options["const"] = True
    else:
        options["metavar"] = flag.metavar
        options["type"] = _checked(model, name)
        if get_origin(annotation) is Literal:
            options["choices"] = get_args(annotation)
        if _is_list(annotation) or _is_mapping(annotation):
            options["action"] = "append"
    parser.add_argument(*flag.names(name, prefix), **options)


def _checked(model: type[BaseModel], name: str) -> Callable[[str], Any]:
    """A flag value checked as the field checks it (a list's or a mapping's values one
    at a time), refused in the field's own words."""
    field = model.model_fields[name]
    annotation = field.annotation
    if _is_list(annotation) or _is_mapping(annotation):
        return str  # each item; the request checks them together
    adapter: TypeAdapter[Any] = TypeAdapter(
        _annotated(annotation, field.metadata)  # the field's validators, not its default
    )

    def check(text: str) -> Any:
        try:
            return adapter.validate_python(text)
        except ValidationError as exc:
            raise argparse.ArgumentTypeError(_said(exc, text)) from None

    return check


def _annotated(annotation: Any, metadata: list[Any]) -> Any:
    return Annotated[(annotation, *metadata)] if metadata else annotation


def _said(exc: ValidationError, text: str) -> str:
    """A refused flag value in a line: the field's own message, or what was expected."""
    error = exc.errors(include_url=False)[0]
    kind = str(error.get("type", ""))
    if kind.startswith("int_"):
        return f"expected a whole number, got {text!r}"
    if kind.startswith("float_"):
        return f"expected a number, got {text!r}"
    return one_line(exc, field=False)


def _is_list(annotation: Any) -> bool:
    return any(get_origin(part) in (list, tuple) for part in _parts(annotation))


def _is_mapping(annotation: Any) -> bool:
    return any(get_origin(part) in (dict, Mapping) for part in _parts(annotation))


def _parts(annotation: Any) -> tuple[Any, ...]:
    if get_origin(annotation) in (Union, types.UnionType):
        return get_args(annotation)
    return (annotation,)


def request_fields_given(
    args: argparse.Namespace, model: type[BaseModel] = RunRequest
) -> dict[str, Any]:
    """The fields of ``model`` (the run request, or a sibling) the flags give (``s3``:
    the S3 options given), leaving out every flag not given."""
    given = vars(args)
    values = {
        name: given[name]
        for name in model.model_fields
        if flag_of(model, name) is not None and given.get(name) is not None
    }
    s3 = {
        option: given[f"{_S3}_{option}"]
        for option in S3Options.model_fields
        if given.get(f"{_S3}_{option}") is not None
    }
    if s3:
        values[_S3] = s3
    return values


def request_from_flags(
    args: argparse.Namespace,
    *,
    earlier: RunRequest | None = None,
    **named: Any,
) -> RunRequest:
    """The run request the flags make, over ``earlier`` (the request a resumed or re-run
    run was started with) and with ``named`` (the positionals: agent, eval set). The S3
    options given are set one by one over the earlier ones. Raises pydantic's
    ``ValidationError`` (a ``ValueError``) for values that do not go together."""
    values = {**request_fields_given(args), **{k: v for k, v in named.items() if v is not None}}
    if values.get("output_dir") is not None:
        report = report_file_of(values["output_dir"])
        if report is not None:  # --output FILE.json: the run folder beside it
            values["output_dir"] = str(report.parent)
    if earlier is None:
        return RunRequest.model_validate(values)
    base = earlier.model_dump()
    if _S3 in values:
        values[_S3] = {**base[_S3], **values[_S3]}
    return RunRequest.model_validate({**base, **values})


def report_file_of(output: str | None) -> Path | None:
    """The JSON report's path when ``--output`` names a ``.json`` file (not a folder)."""
    if output is None:
        return None
    path = Path(output)
    if path.suffix.lower() == ".json" and not path.is_dir():
        return path
    return None


def settings_table() -> str:
    """The run request's fields as a Markdown table (docs/run-settings.md): each one's
    name (the flow's parameter and the keyword of ``AgentEvaluator`` and
    ``evaluate()``), its flag and its description."""
    rows = ["| setting | flag | what it is |", "|---|---|---|"]
    for name, field in RunRequest.model_fields.items():
        models: list[tuple[str, type[BaseModel], str]] = [(name, RunRequest, "")]
        if name == _S3:
            models = [(f"s3.{o}", S3Options, o) for o in S3Options.model_fields]
        for label, model, option in models:
            key = option or name
            flag = flag_of(model, key)
            names = (
                ", ".join(f"`{n}`" for n in flag.names(key, _S3 if option else "")) if flag else "–"
            )
            about = model.model_fields[key].description or field.description or ""
            rows.append(f"| `{label}` | {names} | {about} |")
    return "\n".join(rows) + "\n"
