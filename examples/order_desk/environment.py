"""Each trial's own order database: a fresh SQLite file made from ``seed.sql`` in a
folder of its own, removed when the trial is over.

The eval set names it (``"environment": "examples.order_desk.environment:order_database"``);
the agent's tools reach the database through the ``Environment`` they are given, and a
program the agent starts finds it in ``$ORDER_DESK_DB``. What the database holds when the
agent is done is captured into the trial (:func:`snapshot`), where end-state checks can
read it again later.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from agentflow_eval import Environment

__all__ = ["SEED", "connect", "order_database", "snapshot"]

SEED = Path(__file__).resolve().with_name("seed.sql")


def connect(database: Path) -> sqlite3.Connection:
    """A connection to a trial's database (a scratch copy: no waiting for the disk)."""
    db = sqlite3.connect(database)
    db.execute("PRAGMA synchronous = OFF")
    return db


@contextlib.contextmanager
def order_database(seed: str | None = None) -> Iterator[Environment]:
    """A fresh order database for one trial, from ``seed`` (an SQL file; default
    ``seed.sql``); removed afterwards, however the trial ended."""
    folder = Path(tempfile.mkdtemp(prefix="order-desk-"))
    try:
        database = folder / "orders.db"
        script = Path(seed).read_text(encoding="utf-8") if seed else SEED.read_text("utf-8")
        with contextlib.closing(connect(database)) as db:
            db.executescript(script)
        yield Environment(
            folder=folder,
            database=database,
            variables={"ORDER_DESK_DB": str(database)},
            capture=partial(snapshot, database),
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def snapshot(database: Path) -> dict[str, list[dict[str, Any]]]:
    """Every order and refund, as the trial left them."""
    with contextlib.closing(connect(database)) as db:
        db.row_factory = sqlite3.Row
        return {
            table: [dict(row) for row in db.execute(f"SELECT * FROM {table} ORDER BY rowid")]
            for table in ("orders", "refunds")
        }
