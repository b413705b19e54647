"""Reading the world when a trial is over: what each of the case's end-state checks
finds in the trial's environment (:class:`~agentflow_eval.models.end_state.EndStateCheck`),
kept as :class:`~agentflow_eval.models.results.EndStateProbe` records.

Blocking reads (a query, a file, a synchronous check function) run in worker threads.
A read that fails is recorded with its error, never raised: the agent may have removed
the file or dropped the table, and the verdict says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from agentflow_eval.environments.environment import Environment
from agentflow_eval.models.end_state import EndStateCheck, json_path_value
from agentflow_eval.models.results import EndStateProbe

__all__ = ["CheckFunctions", "read_probes"]

CheckFunctions = Mapping[str, Callable[..., Any]]
"""The loaded function of each ``check`` spec of a run."""


async def read_probes(
    checks: Sequence[EndStateCheck],
    environment: Environment,
    workdir: Path,
    functions: CheckFunctions,
) -> list[EndStateProbe]:
    """What each check of ``checks`` finds (a check of what was captured is read at
    judging, not here), each reading once."""
    probes: dict[str, EndStateProbe] = {}
    for check in checks:
        if check.captured_only or check.key in probes:
            continue
        probes[check.key] = await _probe(check, environment, workdir, functions)
    return list(probes.values())


async def _probe(
    check: EndStateCheck, environment: Environment, workdir: Path, functions: CheckFunctions
) -> EndStateProbe:
    try:
        if check.check is not None:
            found = await _call(functions[check.check], environment, check.options)
        else:
            found = await asyncio.to_thread(_read, check, environment, workdir)
    except Exception as exc:
        return EndStateProbe(key=check.key, error=f"{type(exc).__name__}: {exc}")
    return EndStateProbe(key=check.key, found=to_jsonable_python(found, fallback=repr))


def _read(check: EndStateCheck, environment: Environment, workdir: Path) -> Any:
    if check.sql is not None:
        return _rows(check, environment, workdir)
    assert check.file is not None
    text = environment.path(check.file, workdir).read_text(encoding="utf-8")
    if check.json_path is None:
        return text
    return json_path_value(check.json_path, json.loads(text))


def _rows(check: EndStateCheck, environment: Environment, workdir: Path) -> list[list[Any]]:
    if check.database is not None:
        path = environment.path(check.database, workdir)
    elif environment.database is not None:
        path = environment.path(environment.database, workdir)
    else:
        raise LookupError(
            "no database to query: the check names none, and the environment has no database"
        )
    if not path.is_file():
        raise FileNotFoundError(f"no database at {path}")
    # read-only: the check reads the world the agent left, it never changes it
    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
        return [list(row) for row in db.execute(check.sql or "")]


async def _call(
    fn: Callable[..., Any], environment: Environment, options: Mapping[str, Any]
) -> Any:
    if inspect.iscoroutinefunction(fn):
        return await fn(environment, **options)
    result = await asyncio.to_thread(fn, environment, **options)
    return await result if inspect.isawaitable(result) else result
