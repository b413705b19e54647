"""Prefect homes whose SQLite database is already migrated, for the servers tests start.

A Prefect server on a new database first runs every migration of its schema: about 5 s
of CPU on this project's CI machine, as much again as the rest of its start. A test's
server has no reason to pay that each time (none of them tests Prefect's migrations), so
its home gets a copy of one database migrated once per machine and Prefect version
(:func:`migrated_database`), as a user's second run finds it. The README walk-through in
a fresh install (tests/e2e/test_user_project.py) keeps the first run's migration.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

__all__ = ["migrated_database", "seeded_home"]

DATABASE = "prefect.db"
"""The file a Prefect home keeps its SQLite database in (Prefect's default URL)."""


def migrated_database() -> Path:
    """A SQLite database at the newest schema of the installed Prefect, made the first
    time a test asks on this machine and shared by the sessions after it (one per
    Prefect version; a lock keeps parallel sessions from making it twice)."""
    folder = Path(tempfile.gettempdir()) / f"agentflow-eval-tests-{os.getuid()}"
    folder.mkdir(exist_ok=True)
    target = folder / f"prefect-{version('prefect')}.db"
    with (folder / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            _migrate_into(target)
    return target


def _migrate_into(target: Path) -> None:
    home = Path(tempfile.mkdtemp(prefix="prefect-migrate-", dir=target.parent))
    try:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("PREFECT_API_DATABASE")
        }
        env.update(PREFECT_HOME=str(home), PREFECT_SERVER_ANALYTICS_ENABLED="false")
        subprocess.run(
            [sys.executable, "-m", "prefect", "server", "database", "upgrade", "-y"],
            env=env,
            check=True,
            capture_output=True,
            timeout=300,
        )
        # written whole under another name, then renamed: no session sees half a file
        os.replace(home / DATABASE, target)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def seeded_home(home: Path) -> Path:
    """``home``, created if need be, holding a copy of the migrated database unless it
    has a database already; returned for use as ``PREFECT_HOME``."""
    home.mkdir(parents=True, exist_ok=True)
    if not (home / DATABASE).exists():
        shutil.copyfile(migrated_database(), home / DATABASE)
    return home
