"""Finding and ending the processes an agent started, through ``/proc``.

A process started while the trial stage runs carries a mark in its environment, and so
do the processes it starts in turn (an environment is inherited, and ``/proc/PID/environ``
shows the one a process started with), even once their parent has exited and they were
re-parented. The stage marks every process started meanwhile (its mark is put in
``os.environ``: ``subprocess``, ``asyncio``, ``os.system`` and ``os.fork`` children all
inherit it); a trial marks the ones it starts through ``subprocess.Popen`` (asyncio's
subprocesses included) with its own. Ending a mark kills every process carrying it.

Where there is no ``/proc`` (macOS, Windows) nothing is found and nothing is ended. A
process that clears its environment escapes the mark.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

__all__ = ["STAGE_MARK_PREFIX", "TRIAL_MARK", "end_marked", "marked_pids"]

TRIAL_MARK = "AGENTFLOW_EVAL_TRIAL"
"""The environment variable naming the trial that started a process."""

STAGE_MARK_PREFIX = "AGENTFLOW_EVAL_TRIALS_"
"""Prefix of the environment variable naming the trial stage a process was started in."""

_PROC = Path("/proc")
_ROUNDS = 5
"""Scans before giving up on a process that keeps starting others as fast as they end."""


def marked_pids(name: str, value: str) -> list[int]:
    """The live processes (not this one, not zombies) whose environment has
    ``name=value``."""
    entry = f"{name}={value}".encode()
    own = os.getpid()
    found = []
    with contextlib.suppress(OSError):
        for proc in _PROC.iterdir():
            if not proc.name.isdigit() or int(proc.name) == own:
                continue
            try:
                environ = (proc / "environ").read_bytes()
            except OSError:  # gone, or not ours to read
                continue
            if entry in environ.split(b"\0") and not _zombie(proc):
                found.append(int(proc.name))
    return found


def end_marked(name: str, value: str) -> int:
    """Kill every process whose environment has ``name=value``; how many were killed."""
    killed = 0
    for _ in range(_ROUNDS):
        pids = marked_pids(name, value)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed


def _zombie(proc: Path) -> bool:
    try:
        stat = (proc / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    # "pid (comm) S ...": the state follows the last parenthesis (comm may hold any)
    return stat[stat.rfind(")") + 2 : stat.rfind(")") + 3] in ("Z", "X")
