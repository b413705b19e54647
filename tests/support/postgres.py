"""A throwaway PostgreSQL cluster on 127.0.0.1 for tests that need Prefect's production
database (Debian's ``postgresql`` package: its binaries under /usr/lib/postgresql/*/bin).
Run as root, the server runs as the package's ``postgres`` user, which PostgreSQL
requires."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.prefect_server import free_port


def postgres_bin() -> Path | None:
    """The folder of PostgreSQL's server binaries, or None where it is not installed."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(versions[-1]).parent if versions else None


def _as_owner(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """Start a cluster with a database ``prefect`` in a folder of its own (the server's
    user must reach it: pytest's temporary folders are private to the user running the
    tests); yield its SQLAlchemy URL (``postgresql+asyncpg://``); stop it and remove it."""
    binaries = postgres_bin()
    if binaries is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
    data = Path(tempfile.mkdtemp(prefix="agentflow-eval-pg-"))
    if os.geteuid() == 0:
        shutil.chown(data, "postgres")
    port = free_port()

    def run(*command: str) -> None:
        done = subprocess.run(
            _as_owner([str(binaries / command[0]), *command[1:]]),
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")

    run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync")
    options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off"
    run("pg_ctl", "-D", str(data), "-o", options, "-l", str(data / "server.log"), "-w", "start")
    try:
        run("createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "prefect")
        yield f"postgresql+asyncpg://postgres@127.0.0.1:{port}/prefect"
    finally:
        try:
            run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(data, ignore_errors=True)
