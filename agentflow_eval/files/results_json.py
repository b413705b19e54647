"""``results.json``: writing a run, reading one back, and its published JSON Schema.

A run is written one case and one trial at a time (never as one string: at 10,000 trials
that is tens of MB), from ``run.trials`` or straight from the lines of ``judged.jsonl``.

A reader accepts files of the same major schema version written by this or an older
minor version; anything else is refused with a message that names both versions.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import from_json, to_json

from agentflow_eval.errors import InputError
from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.files.limits import MAX_RESULTS_BYTES, UnreadableFile, read_json_file
from agentflow_eval.files.results_checks import check_numbers, check_run_counts
from agentflow_eval.models.results import SCHEMA_VERSION, RunResult

__all__ = [
    "ResultsFileError",
    "read_results_json",
    "results_json_chunks",
    "results_json_schema",
    "run_result_from_json",
    "write_results_json",
]


class ResultsFileError(InputError):
    """A file that is not a results.json this version can read."""


_ITEM_INDENT = "\n    "


def _slot(name: str) -> str:
    """How an empty top-level list looks in ``model_dump_json(indent=2)``: a top-level
    key is the only thing on a line indented by two spaces (strings escape their
    newlines), so this text occurs once, where the list's items go."""
    return f'\n  "{name}": []'


def _list_items(name: str, blocks: Iterable[str]) -> Iterator[str]:
    """A top-level list, item by item (each block: one item as indented JSON), laid out
    as ``model_dump_json(indent=2)`` lays it out in place of :func:`_slot`."""
    first = True
    for block in blocks:
        yield (f'\n  "{name}": [' if first else ",") + _ITEM_INDENT
        yield block.replace("\n", _ITEM_INDENT)
        first = False
    yield _slot(name) if first else "\n  ]"


def results_json_chunks(
    run: RunResult, trial_lines: Iterable[bytes] | None = None
) -> Iterator[str]:
    """``results.json`` of ``run`` in pieces, one case or trial at a time: the same text
    as ``run.model_dump_json(indent=2)``. The trials are ``run.trials``, or, when
    ``trial_lines`` is given (``run.trials`` must then be empty), those lines as
    ``judged.jsonl`` holds them (one compact JSON ``TrialResult`` each, already validated),
    re-indented without being parsed into models."""
    if trial_lines is not None and run.trials:
        raise ValueError("give the trials either in run.trials or as trial_lines, not both")
    # the two lists that grow with the run are written item by item into their slots
    frame = run.model_copy(update={"cases": [], "trials": []}).model_dump_json(indent=2)
    cases_slot, trials_slot = _slot("cases"), _slot("trials")
    if frame.count(cases_slot) != 1 or frame.count(trials_slot) != 1:
        raise RuntimeError("results.json layout changed: no single empty cases/trials list")
    head, rest = frame.split(cases_slot)
    between, tail = rest.split(trials_slot)
    trials: Iterable[str] = (
        (t.model_dump_json(indent=2) for t in run.trials)
        if trial_lines is None
        else (to_json(from_json(line), indent=2).decode("utf-8") for line in trial_lines)
    )
    yield head
    yield from _list_items("cases", (c.model_dump_json(indent=2) for c in run.cases))
    yield between
    yield from _list_items("trials", trials)
    yield tail


def write_results_json(
    run: RunResult, path: Path, *, trial_lines: Iterable[bytes] | None = None
) -> Path:
    """Write ``run`` to ``path`` as indented UTF-8 JSON, atomically (a reader never sees
    half a file), one trial at a time (see :func:`results_json_chunks` for
    ``trial_lines``); returns the path."""
    return write_text_atomically(path, results_json_chunks(run, trial_lines))


def _version_tuple(version: str) -> tuple[int, int] | None:
    major, _, minor = version.partition(".")
    if not (major.isdigit() and minor.isdigit()):
        return None
    return int(major), int(minor)


def check_schema_version(found: Any, source: str) -> None:
    """Raise :class:`ResultsFileError` unless ``found`` is a version this code reads:
    the same major version and a minor version no newer than :data:`SCHEMA_VERSION`."""
    ours = _version_tuple(SCHEMA_VERSION)
    assert ours is not None
    if found is None:
        raise ResultsFileError(
            f"{source}: no 'schema_version' key; expected a results.json written by "
            f"agentflow-eval (schema {SCHEMA_VERSION})"
        )
    theirs = _version_tuple(found) if isinstance(found, str) else None
    if theirs is None or theirs[0] != ours[0] or theirs[1] > ours[1]:
        raise ResultsFileError(
            f"{source}: results schema version {found!r} is not supported; this "
            f"agentflow-eval reads {ours[0]}.0 to {SCHEMA_VERSION} "
            + (
                "(written by a newer agentflow-eval: upgrade to read it)"
                if theirs is not None and theirs > ours
                else "(written by an incompatible version)"
            )
        )


def read_results_json(path: Path) -> RunResult:
    """The run stored in ``path``. Raises :class:`ResultsFileError` for a file beyond
    the limits every file is held to (:mod:`.limits`: larger than
    :data:`~.limits.MAX_RESULTS_BYTES`, nested too deeply, a number too long), that is
    not JSON, has no or an unsupported ``schema_version``, does not match the schema, or
    holds numbers or counts no run could have."""
    try:
        raw = read_json_file(path, max_bytes=MAX_RESULTS_BYTES, what="a results.json")
    except UnreadableFile as exc:
        raise ResultsFileError(str(exc)) from None
    return run_result_from_json(raw, str(path))


def run_result_from_json(raw: Any, source: str) -> RunResult:
    """The run in ``raw`` (a results.json document, already parsed), checked as
    :func:`read_results_json` checks it — its schema, then its numbers (finite, of a
    possible size) and its counts (:mod:`.results_checks`); ``source`` names it in
    errors."""
    if not isinstance(raw, dict):
        raise ResultsFileError(f"{source}: expected a JSON object, found {type(raw).__name__}")
    check_schema_version(raw.get("schema_version"), source)
    problem = check_numbers(raw)
    if problem is not None:
        raise ResultsFileError(f"{source}: {problem}")
    try:
        run = RunResult.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or '(root)'}: {error['msg']}"
            for error in exc.errors()[:5]
        )
        more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        raise ResultsFileError(
            f"{source}: does not match the results schema: {problems}{more}"
        ) from None
    problem = check_run_counts(run)
    if problem is not None:
        raise ResultsFileError(f"{source}: {problem}")
    return run


def results_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``results.json``, for editors and validators."""
    # as written: the views derived from each turn's events are in the file too
    schema = RunResult.model_json_schema(mode="serialization")
    major = SCHEMA_VERSION.split(".")[0]
    schema["properties"]["schema_version"]["pattern"] = rf"^{major}\.[0-9]+$"
    body = {key: value for key, value in schema.items() if key not in ("title", "description")}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "agentflow-eval results.json",
        "description": (
            "One evaluation run: summary, per-criterion and per-case results, and every "
            f"trial with its trajectory. Schema version {SCHEMA_VERSION}."
        ),
        **body,
    }
