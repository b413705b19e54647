"""Environment functions for the environment tests, named as
``environment_targets:attr``. Each counts its setups and teardowns by the folder it
works in, so a test reads its own counts however many run in this process."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

from agentflow_eval.environments.environment import Environment, TrialInfo

COUNTS: Counter[tuple[str, str]] = Counter()
"""(folder, "setup" | "teardown") → how many."""


def connect(path: Path) -> sqlite3.Connection:
    """A connection that does not wait for the disk at each commit: these databases
    live for one trial."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA journal_mode = MEMORY")
    return db


def _seeded(root: str, trial: TrialInfo) -> Path:
    """A new database in ``root`` holding one row: the trial it was made for."""
    path = Path(root) / f"{trial.case_id}-{trial.trial_index}-{uuid.uuid4().hex[:8]}.db"
    with contextlib.closing(connect(path)) as db, db:
        db.execute("CREATE TABLE rows (owner TEXT NOT NULL)")
        db.execute("INSERT INTO rows VALUES (?)", (f"seed {trial.case_id}#{trial.trial_index}",))
    return path


@contextlib.asynccontextmanager
async def database(root: str, trial: TrialInfo) -> AsyncIterator[Environment]:
    """A fresh SQLite database per trial, removed after it (async)."""
    path = _seeded(root, trial)
    COUNTS[(root, "setup")] += 1
    try:
        yield Environment(database=path, variables={"TRIAL_DB": str(path)})
    finally:
        path.unlink()
        COUNTS[(root, "teardown")] += 1


@contextlib.contextmanager
def database_sync(root: str, trial: TrialInfo) -> Iterator[Environment]:
    """The same, as a synchronous context manager (run in a worker thread)."""
    path = _seeded(root, trial)
    COUNTS[(root, "setup")] += 1
    try:
        yield Environment(database=path, variables={"TRIAL_DB": str(path)})
    finally:
        path.unlink()
        COUNTS[(root, "teardown")] += 1


@contextlib.contextmanager
def broken_setup(root: str) -> Iterator[Environment]:
    COUNTS[(root, "attempt")] += 1
    raise ConnectionError("the seeded database server refused the connection")
    yield Environment()  # pragma: no cover - never reached


@contextlib.contextmanager
def broken_teardown(root: str) -> Iterator[Environment]:
    COUNTS[(root, "setup")] += 1
    yield Environment(folder=Path(root))
    COUNTS[(root, "teardown")] += 1
    raise OSError("could not drop the database")


@contextlib.contextmanager
def yields_a_path(root: str) -> Iterator[Path]:
    COUNTS[(root, "setup")] += 1
    try:
        yield Path(root)
    finally:
        COUNTS[(root, "teardown")] += 1


def not_a_manager(root: str) -> Environment:
    return Environment(folder=Path(root))


@contextlib.asynccontextmanager
async def slow_database(root: str, trial: TrialInfo) -> AsyncIterator[Environment]:
    """Takes a while to set up: a cancellation arrives while it does."""
    COUNTS[(root, "entering")] += 1
    await asyncio.sleep(0.3)
    path = _seeded(root, trial)
    COUNTS[(root, "setup")] += 1
    try:
        yield Environment(database=path)
    finally:
        path.unlink()
        COUNTS[(root, "teardown")] += 1
