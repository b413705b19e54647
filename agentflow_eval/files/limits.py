"""The limits of every file this project reads, and the one way each is read within them.

Eval sets and configs, results.json, comparison.json, a run folder's run.json and each
line of its trials.jsonl and judged.jsonl, published manifests, conversations imported
from elsewhere: any of them may come from another machine, a bucket or a hand edit, and
each is held to the same limits before anything trusts its content:

- **size**: a file larger than its limit is refused before it is read, since parsing
  takes many times a file's size in memory (:data:`MAX_FILE_BYTES` for every document
  read whole, :data:`MAX_RESULTS_BYTES` for a results.json read with its trials);
- **nesting**: lists and objects nested more than :data:`MAX_NESTING_DEPTH` levels deep;
- **numbers**: a number written with more than :data:`MAX_NUMBER_DIGITS` characters.

A document read into plain data goes through :func:`parse_json`; one read straight into
a model (a line of trials, a manifest) through :func:`validate_json`, where pydantic-core's
parser holds it to the same nesting and number limits.

Each refusal is an :class:`UnreadableFile`, one line naming the file (and the field, for
a number), which each reader may turn into its own error.
"""

from __future__ import annotations

import json
import math
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from agentflow_eval.errors import InputError
from agentflow_eval.files.naming import printable
from agentflow_eval.models.environment import MAX_FILE_MB_ENV

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_NESTING_DEPTH",
    "MAX_NUMBER_DIGITS",
    "MAX_RESULTS_BYTES",
    "LimitedYamlLoader",
    "UnreadableFile",
    "check_file",
    "check_tree",
    "max_file_bytes",
    "not_a",
    "parse_json",
    "read_file_bytes",
    "read_json_file",
    "size_text",
    "validate_json",
]

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest file read whole by default (64 MiB): an eval set or config, and every other
document (run.json, comparison.json, a manifest, a conversation, one JSON line). Ten
thousand rich cases fit in a tenth of it. A front door may set another for eval sets and
configs (:func:`max_file_bytes`)."""

MAX_RESULTS_BYTES = 16 * MAX_FILE_BYTES
"""The largest results.json read with its trials (1 GiB: a run of a hundred thousand
rich trials). A comparison reads only the part before the trials, which is held to
:data:`MAX_FILE_BYTES`."""

MAX_NESTING_DEPTH = 200
"""How deeply lists and mappings may nest in a file. Real files nest a dozen levels; far
deeper data can only exhaust the parser's or the validator's stack."""

MAX_NUMBER_DIGITS = 4300
"""The most characters a number may be written with: Python's own default limit for
turning digits into an integer, past which reading one is refused rather than slow."""

M = TypeVar("M", bound=BaseModel)

_TOO_DEEP = f"nested more than {MAX_NESTING_DEPTH} levels deep"


class UnreadableFile(InputError):
    """A file refused before its content is used: larger than its limit, nested too
    deeply, a number too long, not the text its kind is written in. ``str()`` is one line:
    ``source: problem``, or ``source: field F: problem``."""

    def __init__(self, source: str | Path, problem: str, *, field: str | None = None) -> None:
        self.source = str(source)
        self.problem = problem
        self.field = field
        where = f"field {field}: " if field else ""
        super().__init__(f"{self.source}: {where}{problem}")


def max_file_bytes(mib: str | float | None) -> int:
    """The largest input file, in bytes, for ``mib`` MiB as a flag or
    :data:`MAX_FILE_MB_ENV` gives it (``None`` or empty: :data:`MAX_FILE_BYTES`). Raises
    :class:`InputError` (one line) for anything but a positive number."""
    if mib is None or (isinstance(mib, str) and not mib.strip()):
        return MAX_FILE_BYTES
    try:
        value = float(mib)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise InputError(
            f"the largest input file ({MAX_FILE_MB_ENV} or --max-file-mb) must be a positive "
            f"number of MiB, got {mib!r}"
        )
    return max(1, int(value * 2**20))


def size_text(count: int) -> str:
    """A byte count as people read it: ``1.5 MiB``, ``12.0 KiB``."""
    return f"{count / 2**20:,.1f} MiB" if count >= 2**20 else f"{count / 2**10:,.1f} KiB"


def _special_file_kind(path: Path) -> str | None:
    """What ``path`` is when it is not a regular file (after following links)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None  # reading it will say what is wrong
    for test, kind in (
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a regular file"


def check_file(
    path: Path, *, max_bytes: int, what: str, advice: str, expected: str = "a file"
) -> None:
    """Raise :class:`UnreadableFile` unless ``path`` is a regular file of at most
    ``max_bytes``: a missing file, a folder, a FIFO (the read would block forever) or a
    device (it would never end) are refused, and a larger file before it is read (its
    message: ``what`` may be at most so much; ``advice`` says what to do)."""
    if not path.exists():
        raise UnreadableFile(path, "file not found")
    if path.is_dir():
        raise UnreadableFile(path, f"is a directory, expected {expected}")
    kind = _special_file_kind(path)
    if kind is not None:
        raise UnreadableFile(path, f"is {kind}, not a regular file")
    size = path.stat().st_size
    if size > max_bytes:
        raise UnreadableFile(
            path,
            f"is {size_text(size)}, more than the {size_text(max_bytes)} {what} may be; {advice}",
        )


class _LongNumber:
    """Stands in, while a file is read, for a number written too long to be read; the
    check that follows names where it is."""

    __slots__ = ("length",)

    def __init__(self, length: int) -> None:
        self.length = length


def _int(text: str) -> int | _LongNumber:
    return _LongNumber(len(text)) if len(text) > MAX_NUMBER_DIGITS else int(text)


def _float(text: str) -> float | _LongNumber:
    return _LongNumber(len(text)) if len(text) > MAX_NUMBER_DIGITS else float(text)


def parse_json(text: str | bytes, source: str | Path) -> Any:
    """The parsed JSON ``text`` (bytes: UTF-8, a byte-order mark allowed), within the
    nesting and number limits (:func:`check_tree`). Raises :class:`UnreadableFile` naming
    ``source`` for text that is not UTF-8, not JSON (with its line and column), nested too
    deeply or holding a number too long (with its field)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise UnreadableFile(
                source, f"not UTF-8 text: undecodable byte at offset {exc.start}"
            ) from None
    try:
        data = json.loads(text, parse_int=_int, parse_float=_float)
    except json.JSONDecodeError as exc:
        raise UnreadableFile(
            source, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise UnreadableFile(source, _TOO_DEEP) from None
    check_tree(data, source)
    return data


def read_file_bytes(
    path: Path, *, max_bytes: int = MAX_FILE_BYTES, what: str = "a file read whole"
) -> bytes:
    """The bytes of the file at ``path``, refused (:func:`check_file`) when it is no
    regular file or larger than ``max_bytes``."""
    check_file(
        path,
        max_bytes=max_bytes,
        what=what,
        advice="it is not one this project wrote",
        expected="a JSON file",
    )
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UnreadableFile(path, f"cannot be read: {exc.strerror or exc}") from None


def read_json_file(
    path: Path, *, max_bytes: int = MAX_FILE_BYTES, what: str = "a file read whole"
) -> Any:
    """The JSON document in the file at ``path``, within every limit: its size
    (:func:`check_file`), its nesting and its numbers (:func:`parse_json`)."""
    return parse_json(read_file_bytes(path, max_bytes=max_bytes, what=what), path)


def validate_json(model: type[M], data: bytes | str, source: str | Path) -> M:
    """JSON ``data`` read straight into ``model``, within every limit: no larger than
    :data:`MAX_FILE_BYTES`, and parsed by pydantic-core (at the speed the run's own files
    need), whose parser refuses nesting past :data:`MAX_NESTING_DEPTH` (one level more)
    and integers past :data:`MAX_NUMBER_DIGITS` (tests/unit/files/test_limits.py holds
    it to that); such a refusal is worded by :func:`parse_json`, naming the field. Raises
    :class:`UnreadableFile` naming ``source`` and the first problem's field."""
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableFile(source, f"more than the {size_text(MAX_FILE_BYTES)} a document may be")
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        if exc.errors()[0]["type"] == "json_invalid":
            parse_json(data, source)  # says what is wrong in this module's words, if it can
        raise not_a(model, exc, source) from None


def not_a(model: type[BaseModel], exc: ValidationError, source: str | Path) -> UnreadableFile:
    """The refusal of data from ``source`` that is not a ``model`` (``exc`` says why):
    its first problem, with its field."""
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"])
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return UnreadableFile(
        source,
        f"not a {model.__name__}: {printable(str(error['msg']), keep_newlines=False)}{more}",
        field=printable(field, keep_newlines=False) or None,
    )


def check_tree(data: Any, source: str | Path) -> None:
    """Raise :class:`UnreadableFile` when parsed ``data`` nests lists and mappings more
    than :data:`MAX_NESTING_DEPTH` deep, or holds a number written too long (naming its
    field). Walked without recursion, so no depth exhausts the stack."""
    long_number = False
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            long_number = long_number or isinstance(value, _LongNumber)
            continue
        if depth > MAX_NESTING_DEPTH:
            raise UnreadableFile(source, _TOO_DEEP)
        stack.extend((child, depth + 1) for child in children)
    if long_number:
        field, number = next(_long_numbers(data))
        raise UnreadableFile(
            source,
            f"a number {number.length:,} characters long; a number may have at most "
            f"{MAX_NUMBER_DIGITS:,}",
            field=field,
        )


def _long_numbers(data: Any) -> Iterator[tuple[str, _LongNumber]]:
    """Each number written too long in ``data``, with its field path, in document order
    (``data`` is known to nest within the limit)."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, _LongNumber):
            yield printable(where, keep_newlines=False) or "(root)", value
        elif isinstance(value, dict):
            items = [(v, f"{where}.{k}" if where else str(k)) for k, v in value.items()]
            stack.extend(reversed(items))
        elif isinstance(value, list):
            stack.extend(reversed([(v, f"{where}[{i}]") for i, v in enumerate(value)]))


class LimitedYamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader, with numbers written too long kept for :func:`check_tree` to
    name instead of read (reading one raises deep inside the parser)."""


def _yaml_int(loader: LimitedYamlLoader, node: yaml.ScalarNode) -> int | _LongNumber:
    value = str(node.value)
    if len(value) > MAX_NUMBER_DIGITS:
        return _LongNumber(len(value))
    return loader.construct_yaml_int(node)


def _yaml_float(loader: LimitedYamlLoader, node: yaml.ScalarNode) -> float | _LongNumber:
    value = str(node.value)
    if len(value) > MAX_NUMBER_DIGITS:
        return _LongNumber(len(value))
    return loader.construct_yaml_float(node)


LimitedYamlLoader.add_constructor("tag:yaml.org,2002:int", _yaml_int)
LimitedYamlLoader.add_constructor("tag:yaml.org,2002:float", _yaml_float)
