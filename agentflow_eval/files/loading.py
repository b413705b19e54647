"""Reading eval sets and configs from files, with errors that say which file, which case
and which field is wrong.

:func:`load_evalset` reads

- a native eval set or a Google ADK ``*.evalset.json``, snake_case or
  camelCase, as JSON (``.json``) or YAML (``.yaml``/``.yml``);
- an ADK ``*.test.json``: an eval set object, or the legacy list of turns (one
  multi-turn case per file) or list of cases (see :mod:`agentflow_eval.files.adk`);
- a directory: every ``*.evalset.json|yaml|yml`` and ``*.test.json|yaml|yml`` below it
  (sorted, recursively, as ADK walks test folders), merged into one eval set whose id and
  name are the directory's name. A case id used by more than one file is prefixed, in
  every file that uses it, with that file's path relative to the directory minus its
  suffix (``checkout/payments.evalset.json`` → ``checkout/payments/<id>``); each
  rename is reported as a warning.

:func:`load_config` reads native configs and ADK ``test_config.json`` files (a
criterion as a bare threshold or an object, ``judge_model_options``): given the criteria's
catalogue, each criterion's own options are read by its own model (this layer cannot know
them; :mod:`agentflow_eval.criteria.config_files` passes the registry), else they are kept
as written. :func:`find_config_for` applies ADK's convention of a ``test_config.json``
next to the eval file. Every problem is an :class:`EvalFileError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from agentflow_eval.files import adk
from agentflow_eval.files.errors import (
    EVALSET_CASES,
    CaseLayout,
    EvalFileError,
    Problem,
    describe_kind,
    did_you_mean,
    known_keys,
    problems_from_validation,
)
from agentflow_eval.files.limits import (
    MAX_FILE_BYTES,
    MAX_NESTING_DEPTH,
    MAX_NUMBER_DIGITS,
    LimitedYamlLoader,
    UnreadableFile,
    check_file,
    check_tree,
    max_file_bytes,
    parse_json,
)
from agentflow_eval.models.config import CRITERIA_CATALOGUE, CriteriaCatalogue, EvalConfig
from agentflow_eval.models.environment import MAX_FILE_MB_ENV
from agentflow_eval.models.evalset import EvalCase, EvalSet

__all__ = [
    "CONFIG_FILE_NAME",
    "EVAL_FILE_SUFFIXES",
    "MAX_FILE_BYTES",
    "MAX_NESTING_DEPTH",
    "MAX_NUMBER_DIGITS",
    "EvalFileError",
    "LoadedEvalSet",
    "Problem",
    "eval_file_stem",
    "find_config_for",
    "load_config",
    "load_evalset",
    "max_file_bytes",
    "read_document",
    "resolve_config",
]

EVAL_FILE_SUFFIXES = (
    ".evalset.json",
    ".evalset.yaml",
    ".evalset.yml",
    ".test.json",
    ".test.yaml",
    ".test.yml",
)
"""The file names a directory load picks up."""

CONFIG_FILE_NAME = "test_config.json"
"""ADK's name for the config that sits next to an eval file."""

_DATA_SUFFIXES = (".json", ".yaml", ".yml")
_LEGACY_CASES = CaseLayout(container=None, id_keys=("name",), case_type=adk.LegacyCase)


# ----------------------------------------------------------------------- reading a file


def read_document(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> Any:
    """The parsed content of a JSON (``.json``) or YAML (``.yaml``/``.yml``) file.

    Raises :class:`EvalFileError` for a missing file, something that is not a regular
    file (a FIFO would block the read forever, a device never end it), one larger than
    ``max_bytes``, another extension, text that is not UTF-8, an empty file, a syntax
    error (with its line and column), data nested deeper than :data:`MAX_NESTING_DEPTH`,
    a number written longer than :data:`MAX_NUMBER_DIGITS` (with its field), or YAML
    aliases that expand past :data:`MAX_VALUES`. The limits are every file's
    (:mod:`agentflow_eval.files.limits`).
    """
    path = Path(path)
    try:
        return _read_document(path, max_bytes)
    except UnreadableFile as exc:
        raise EvalFileError(path, exc.problem, field=exc.field) from None


def _read_document(path: Path, max_bytes: int) -> Any:
    check_file(
        path,
        max_bytes=max_bytes,
        what="an eval set or config",
        advice="split it into several files in a folder, or raise the limit "
        f"(--max-file-mb, {MAX_FILE_MB_ENV})",
        expected="a .json, .yaml or .yml file",
    )
    suffix = path.suffix.lower()
    if suffix not in _DATA_SUFFIXES:
        raise EvalFileError(
            path, f"unsupported file type {suffix or '(none)'!r}; expected .json, .yaml or .yml"
        )
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise EvalFileError(
            path, f"not UTF-8 text: undecodable byte at offset {exc.start}"
        ) from None
    if not text.strip():
        raise EvalFileError(path, "file is empty")
    if suffix == ".json":
        return parse_json(text, path)
    too_deep = f"nested more than {MAX_NESTING_DEPTH} levels deep"
    if _yaml_flow_depth(text) > MAX_NESTING_DEPTH:
        raise EvalFileError(path, too_deep)  # checked first: the parser recurses per level
    try:
        data = yaml.load(text, Loader=LimitedYamlLoader)  # a safe loader: SafeLoader's subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = exc.problem or exc.context or "syntax error"
        raise EvalFileError(path, f"invalid YAML{where}: {what}") from None
    except yaml.YAMLError as exc:
        raise EvalFileError(path, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise EvalFileError(path, too_deep) from None
    if data is None:
        raise EvalFileError(path, "file holds no data (only comments or an empty document)")
    if _expanded_size(data) > MAX_VALUES:
        raise EvalFileError(
            path,
            f"its aliases expand to more than {MAX_VALUES:,} values (an alias that repeats "
            "an alias, as in a 'billion laughs' file); write the values out instead",
        )
    check_tree(data, path)
    return data


MAX_VALUES = 1_000_000
"""How many values (lists, mappings and scalars) a YAML file may hold once its aliases are
expanded. Each alias is a reference to a value written once, and reading the file gives
an object graph of that size; but everything after reading walks it as a tree, and a few
lines of aliases of aliases make that tree astronomically large."""


def _expanded_size(data: Any) -> int:
    """How many values ``data`` holds counted as a tree (a shared value once per place it
    is used), in time proportional to its distinct values; stops counting past
    :data:`MAX_VALUES`."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        value, children_done = stack.pop()
        if isinstance(value, dict):
            children: list[Any] = list(value.values())
        elif isinstance(value, list):
            children = value
        else:
            continue
        if id(value) in sizes:
            continue
        if not children_done:
            stack.append((value, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        total = 1 + sum(sizes.get(id(child), 1) for child in children)
        sizes[id(value)] = min(total, MAX_VALUES + 1)
    return sizes.get(id(data), 1)


def _yaml_flow_depth(text: str) -> int:
    """The deepest run of open ``[``/``{`` brackets outside quotes: YAML's flow
    collections, which nest without indentation. Quotes are followed roughly (to the end
    of their line); the count is only compared with a limit no real file comes near."""
    if "[" not in text and "{" not in text:
        return 0
    depth = deepest = 0
    quote: str | None = None
    for char in text:
        if char == "\n":
            quote = None  # an apostrophe in plain text opens no quote past its line
        elif quote is not None:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
    return deepest


# --------------------------------------------------------------------------- eval sets


@dataclass(frozen=True)
class LoadedEvalSet:
    """An eval set read from ``path`` (a file or a directory), the warnings met while
    reading it (each names its file and, where it applies, its case), and the file each
    case came from."""

    eval_set: EvalSet
    path: Path
    warnings: list[str] = field(default_factory=list)
    case_sources: dict[str, Path] = field(default_factory=dict)


def load_evalset(
    path: str | Path,
    *,
    initial_session: Mapping[str, Any] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> LoadedEvalSet:
    """Read an eval set from a file or a directory (see the module docstring).

    ``initial_session`` (``app_name``, ``user_id``, ``state``, as in ADK's
    ``initial_session_file``) starts the session of legacy-format cases that have none;
    eval-set files carry their own ``session_input``, so for them it is not used (a
    warning says so). A file larger than ``max_bytes`` is refused before it is read.
    Raises :class:`EvalFileError`.
    """
    path = Path(path)
    if path.is_dir():
        return _load_directory(path, initial_session, max_bytes)
    return _load_file(path, initial_session, max_bytes)


def eval_file_stem(path: str | Path) -> str:
    """A file's name without its eval suffix: ``weather.evalset.json`` → ``weather``."""
    name = Path(path).name
    for suffix in (*EVAL_FILE_SUFFIXES, *_DATA_SUFFIXES):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _load_file(
    path: Path, initial_session: Mapping[str, Any] | None, max_bytes: int = MAX_FILE_BYTES
) -> LoadedEvalSet:
    raw = read_document(path, max_bytes=max_bytes)
    warnings: list[str] = []
    if isinstance(raw, list):
        data = _from_legacy(path, raw, initial_session, warnings)
    elif isinstance(raw, dict):
        data = raw
        if initial_session:
            warnings.append(
                f"{path}: initial_session is used only for legacy test files; this file's "
                "cases take their session from their own session_input"
            )
    else:
        raise EvalFileError(
            path,
            "expected an object (an eval set) or a list (a legacy ADK test file) at the "
            f"top level, found {describe_kind(raw)}",
        )
    eval_set = _validate_evalset(path, data)
    warnings += _unknown_key_warnings(path, data, eval_set)
    sources = {case.eval_id: path for case in eval_set.eval_cases}
    return LoadedEvalSet(eval_set=eval_set, path=path, warnings=warnings, case_sources=sources)


def _from_legacy(
    path: Path,
    raw: list[Any],
    initial_session: Mapping[str, Any] | None,
    warnings: list[str],
) -> dict[str, Any]:
    stem = eval_file_stem(path)
    if not raw:
        raise EvalFileError(
            path,
            "the file holds an empty list; a legacy ADK test file is a list of "
            '{"query": ..., "expected_tool_use": [...], "reference": ...} turns',
        )
    case_list = adk.is_legacy_case_list(raw)
    try:
        converted = adk.legacy_to_evalset(raw, eval_set_id=stem, initial_session=initial_session)
    except ValidationError as exc:
        if case_list:
            problems = problems_from_validation(exc, raw, list[adk.LegacyCase], cases=_LEGACY_CASES)
        else:
            problems = problems_from_validation(exc, raw, list[adk.LegacyTurn], case_id=stem)
        raise EvalFileError.from_problems(path, problems) from None
    for case_id, key in converted.unknown_keys:
        warnings.append(f"{path}: case {case_id!r}: unknown key {key!r} is ignored")
    if not case_list:
        warnings.append(
            f"{path}: legacy ADK test format (a list of turns), read as one "
            f"{len(raw)}-turn case {stem!r}"
        )
    return converted.data


def _validate_evalset(path: Path, data: dict[str, Any]) -> EvalSet:
    duplicates = _duplicate_id_problems(data)
    try:
        eval_set = EvalSet.model_validate(data)
    except ValidationError as exc:
        problems = problems_from_validation(exc, data, EvalSet, cases=EVALSET_CASES)
        if duplicates:  # drop the model's own set-level "appears more than once"
            problems = [p for p in problems if p.field is not None or p.case_id is not None]
        raise EvalFileError.from_problems(path, duplicates + problems) from None
    if duplicates:  # EvalSet rejects them too; this keeps the check should it stop
        raise EvalFileError.from_problems(path, duplicates)
    return eval_set


def _duplicate_id_problems(data: Mapping[str, Any]) -> list[Problem]:
    key, cases = EVALSET_CASES.cases(data)
    where: dict[str, list[int]] = {}
    for index, case in enumerate(cases):
        case_id = EVALSET_CASES.case_id(case)
        if case_id is not None:
            where.setdefault(case_id, []).append(index)
    key = key or "eval_cases"
    return [
        Problem(
            case_id=case_id,
            field="eval_id",
            message="duplicate eval_id, used by "
            + ", ".join(f"{key}[{i}]" for i in indexes)
            + "; ids must be unique within a set",
        )
        for case_id, indexes in where.items()
        if len(indexes) > 1
    ]


def _unknown_key_warnings(path: Path, data: Mapping[str, Any], eval_set: EvalSet) -> list[str]:
    warnings = []
    known_set = known_keys(EvalSet)
    for key in data:
        if key not in known_set and key != "$schema":
            warnings.append(f"{path}: unknown key {key!r} is ignored{did_you_mean(key, known_set)}")
    known_case = known_keys(EvalCase)
    for case in eval_set.eval_cases:
        for key in case.unknown_fields:
            warnings.append(
                f"{path}: case {case.eval_id!r}: unknown key {key!r} is kept but not used"
                f"{did_you_mean(key, known_case)}"
            )
        unused = _unused_adk_fields(case)
        if unused:
            warnings.append(f"{path}: case {case.eval_id!r}: {'; '.join(unused)}")
    return warnings


def _unused_adk_fields(case: EvalCase) -> list[str]:
    """What ADK records in a case that no criterion of this package looks at."""
    unused = []
    if any(inv.app_details for inv in case.conversation):
        unused.append(
            "app_details is kept but not judged (agent instructions and tool declarations "
            "of the recorded run)"
        )
    if any(inv.expected_tool_responses for inv in case.conversation):
        unused.append(
            "the recorded tool responses (intermediate_data tool_responses or "
            "function_response parts) are kept but not judged: tool calls are compared by "
            "name and arguments"
        )
    streaming = sorted(
        {
            key
            for inv in case.conversation
            for call in inv.expected_tool_trajectory
            for key in call.streaming_fields
        }
    )
    if streaming:
        unused.append(
            f"the expected tool calls' {' and '.join(streaming)} (streamed pieces of a call) "
            "are kept but not compared: a call is compared by name and args"
        )
    kinds = sorted(
        {part.type for inv in case.conversation for part in inv.user_content.content} - {"text"}
    )
    if kinds:
        unused.append(
            f"user_content parts of kind {', '.join(kinds)} are kept but not sent: the agent "
            "receives the text parts of a user turn"
        )
    if case.session_input is not None and case.session_input.session_id:
        unused.append("session_input.session_id is not used: every trial runs in a fresh session")
    return unused


# --------------------------------------------------------------------------- directories


def _load_directory(
    directory: Path, initial_session: Mapping[str, Any] | None, max_bytes: int
) -> LoadedEvalSet:
    files = sorted(
        p
        for p in directory.rglob("*")
        if p.is_file() and p.name.lower().endswith(EVAL_FILE_SUFFIXES)
    )
    if not files:
        raise EvalFileError(
            directory,
            "no eval files in this directory; expected *.evalset.json, *.evalset.yaml "
            "or *.test.json files",
        )
    parts = [_load_file(f, initial_session, max_bytes) for f in files]
    cases, sources, renames = _merge_cases(
        parts, {f: _label(f.relative_to(directory)) for f in files}
    )
    name = directory.resolve().name or "evalset"
    return LoadedEvalSet(
        eval_set=EvalSet(eval_set_id=name, name=name, eval_cases=cases),
        path=directory,
        warnings=[w for part in parts for w in part.warnings]
        + [f"{directory}: {rename}" for rename in renames],
        case_sources=sources,
    )


def _merge_cases(
    parts: list[LoadedEvalSet], labels: dict[Path, str]
) -> tuple[list[EvalCase], dict[str, Path], list[str]]:
    """The cases of several files in one list, each id used by more than one file
    prefixed with its file's label; also where each case came from, and the renames."""
    owners: dict[str, list[Path]] = {}
    for part in parts:
        for case in part.eval_set.eval_cases:
            owners.setdefault(case.eval_id, []).append(part.path)
    cases: list[EvalCase] = []
    sources: dict[str, Path] = {}
    for part in parts:
        for case in part.eval_set.eval_cases:
            if len(owners[case.eval_id]) > 1:
                case = case.model_copy(update={"eval_id": f"{labels[part.path]}/{case.eval_id}"})
            if case.eval_id in sources:  # a prefixed id that a file already uses as it is
                raise EvalFileError(
                    part.path,
                    f"eval_id {case.eval_id!r} is also used by {sources[case.eval_id]}; "
                    "rename one of them",
                    case_id=case.eval_id,
                    field="eval_id",
                )
            cases.append(case)
            sources[case.eval_id] = part.path
    renames = [
        f"case id {case_id!r} is used by {len(paths)} files; renamed to "
        + ", ".join(repr(f"{labels[p]}/{case_id}") for p in paths)
        for case_id, paths in owners.items()
        if len(paths) > 1
    ]
    return cases, sources, renames


def _label(relative: Path) -> str:
    """A file's path below the directory without its eval suffix: ``sub/x``."""
    stem = eval_file_stem(relative)
    return stem if relative.parent == Path(".") else f"{relative.parent.as_posix()}/{stem}"


# ------------------------------------------------------------------------------ configs


def load_config(
    path: str | Path,
    *,
    criteria: CriteriaCatalogue | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> EvalConfig:
    """Read an evaluation config (native, or ADK ``test_config.json``) from JSON or
    YAML. With ``criteria``, each entry is read by its criterion's own options model and
    what a criterion accepts without using is warned about; without, a criterion's own
    options are kept as written. Raises :class:`EvalFileError`."""
    path = Path(path)
    raw = read_document(path, max_bytes=max_bytes)
    if not isinstance(raw, dict):
        raise EvalFileError(
            path,
            f'expected an object such as {{"criteria": {{...}}}} at the top level, '
            f"found {describe_kind(raw)}",
        )
    try:
        normalised = adk.normalise_config(raw, known_keys(EvalConfig), criteria)
    except adk.AdkFormatError as exc:
        raise EvalFileError(path, exc.message, field=exc.field) from None
    try:
        context = {CRITERIA_CATALOGUE: criteria} if criteria is not None else None
        config = EvalConfig.model_validate(normalised.data, context=context)
    except ValidationError as exc:
        raise EvalFileError.from_problems(
            path, problems_from_validation(exc, raw, EvalConfig, criteria=criteria)
        ) from None
    config.load_warnings.extend(f"{path}: {warning}" for warning in normalised.warnings)
    return config


def find_config_for(evalset_path: str | Path) -> Path | None:
    """ADK's convention: the ``test_config.json`` in the eval file's directory (or in the
    directory itself, when given one), if there is one."""
    path = Path(evalset_path)
    folder = path if path.is_dir() else path.parent
    candidate = folder / CONFIG_FILE_NAME
    return candidate if candidate.is_file() else None


def resolve_config(
    evalset_path: str | Path,
    config_path: str | Path | None = None,
    *,
    criteria: CriteriaCatalogue | None = None,
) -> EvalConfig:
    """The config for an eval set: ``config_path`` when given, else the
    ``test_config.json`` next to it, else :meth:`EvalConfig.default` (ADK's defaults)."""
    chosen = Path(config_path) if config_path is not None else find_config_for(evalset_path)
    if chosen is None:
        return EvalConfig.default()
    return load_config(chosen, criteria=criteria)
