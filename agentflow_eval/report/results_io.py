"""``results.json``: writing a run, reading one back, and its published JSON Schema.

A reader accepts files of the same major schema version written by this or an older
minor version; anything else is refused with a message that names both versions.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentflow_eval.results import SCHEMA_VERSION, RunResult

__all__ = [
    "ResultsFileError",
    "read_results_json",
    "results_json_schema",
    "write_results_json",
]


class ResultsFileError(ValueError):
    """A file that is not a results.json this version can read."""


def write_results_json(run: RunResult, path: Path) -> Path:
    """Write ``run`` to ``path`` as indented UTF-8 JSON, atomically (a reader never sees
    half a file); returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = run.model_dump_json(indent=2)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


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
    """The run stored in ``path``. Raises :class:`ResultsFileError` for a file that is
    not JSON, has no or an unsupported ``schema_version``, or does not match the schema."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ResultsFileError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(raw, dict):
        raise ResultsFileError(f"{path}: expected a JSON object, found {type(raw).__name__}")
    check_schema_version(raw.get("schema_version"), str(path))
    try:
        return RunResult.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or '(root)'}: {error['msg']}"
            for error in exc.errors()[:5]
        )
        more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        raise ResultsFileError(
            f"{path}: does not match the results schema: {problems}{more}"
        ) from None


def results_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``results.json``, for editors and validators."""
    schema = RunResult.model_json_schema()
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
