"""How many trials each case of a recording has so far, kept on disk (SQLite, in the
recording's folder) rather than in memory: a source of a hundred thousand traces, each
its own case, is read in the same memory as one of a hundred."""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["CaseIndex"]


class CaseIndex:
    """Each case's trials so far; :meth:`take` hands out the next trial index."""

    def __init__(self, path: Path) -> None:
        path.unlink(missing_ok=True)  # made afresh: a resumed batch rebuilds it
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("PRAGMA cache_size=-256")  # KiB: a version's index, not its traces
        self._db.execute("CREATE TABLE cases (id TEXT PRIMARY KEY, trials INTEGER NOT NULL)")
        self._db.execute("BEGIN")

    def take(self, case_id: str) -> int:
        """The index of the case's next trial, counted as taken."""
        row = self._db.execute("SELECT trials FROM cases WHERE id = ?", (case_id,)).fetchone()
        if row is None:
            self._db.execute("INSERT INTO cases VALUES (?, 1)", (case_id,))
            return 0
        self._db.execute("UPDATE cases SET trials = ? WHERE id = ?", (row[0] + 1, case_id))
        return int(row[0])

    def seen(self, case_id: str, trial_index: int) -> None:
        """A trial already recorded (rebuilding the index)."""
        self._db.execute(
            "INSERT INTO cases VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET "
            "trials = max(trials, excluded.trials)",
            (case_id, trial_index + 1),
        )

    @property
    def cases(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM cases").fetchone()[0])

    @property
    def most_trials(self) -> int:
        """The most trials one case has (1 when there are none)."""
        found = self._db.execute("SELECT max(trials) FROM cases").fetchone()[0]
        return int(found or 1)

    def close(self) -> None:
        self._db.close()
