"""The core tier's guards (installed by tests/unit/conftest.py): a core test imports no
Prefect and starts no process.

- :class:`FirstImport` remembers the stack that first imported a package, so a test that
  pulls Prefect in (directly, through a module it imports, or at collection) is named
  with the line that did it.
- :class:`ProcessGuard`, an audit hook, refuses to start a process while a core test runs
  (its fixtures included): ``subprocess``, ``os.system``, ``fork``, ``exec``, ``spawn``
  raise :class:`ProcessInCoreTier` at the call.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass
from importlib.abc import MetaPathFinder
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.exec",
    }
)


def _ours(filename: str) -> bool:
    """A frame of this repository's code (not pytest's, importlib's or a package's)."""
    return filename.startswith(str(ROOT)) and "site-packages" not in filename


class FirstImport(MetaPathFinder):
    """Remembers the stack that first imported the package ``name``; finds nothing itself
    (the import goes on as usual)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.stack: str | None = None

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if self.stack is None and fullname == self.name:
            frames = [f for f in traceback.extract_stack()[:-1] if _ours(f.filename)]
            self.stack = "".join(traceback.format_list(frames))
        return None

    def imported_by(self) -> str:
        return self.stack or "(imported before the watch started)"


class ProcessInCoreTier(RuntimeError):
    """A core-tier test started a process."""


class ProcessGuard:
    """An audit hook (added once, for the interpreter's life: audit hooks cannot be
    removed) that refuses to start a process while :attr:`active`."""

    def __init__(self) -> None:
        self.active = False
        sys.addaudithook(self._audit)

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if self.active and event in PROCESS_EVENTS:
            what = args[1] if event == "subprocess.Popen" and len(args) > 1 else args
            raise ProcessInCoreTier(
                f"{event} {what!r}: the core tier starts no process; a test that needs one "
                "belongs in tests/flows or tests/e2e"
            )


@dataclass
class PrefectGuard:
    """Whether the Prefect guard is on: in a session of the core tier alone. A session
    that also runs other tiers imports Prefect by design (their conftests do, at
    collection), and the guard stands down."""

    on: bool = False


PREFECT_WATCH = FirstImport("prefect")
if "prefect" not in sys.modules:
    sys.meta_path.insert(0, PREFECT_WATCH)
PREFECT_GUARD = PrefectGuard()
PROCESS_GUARD = ProcessGuard()
