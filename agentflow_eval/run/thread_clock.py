"""How much of a stretch of wall time one thread spent on its own work.

A thread that is not running is either waiting in the kernel (asleep in ``time.sleep``,
blocked on a socket or a disk: the kernel's ``S`` and ``D`` states) or ready to run but not
given a CPU, because other processes hold them. Only the first is the thread's doing; the
second is the machine's load. :class:`ThreadClock` tells them apart for the event loop's
watchdog: its own work is the CPU time the thread used plus the time it spent waiting in
the kernel, and the time it stood ready without a CPU is left out.

Read from Linux's ``/proc/self/task/<tid>/stat`` (the state) and the thread's CPU-time
clock (``time.pthread_getcpuclockid``). Where either is missing, every second counts, as
wall time.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ThreadClock"]

_WAITING = frozenset("SD")
"""Kernel states of a thread waiting for something: interruptible and disk sleep."""


@dataclass
class ThreadClock:
    """The own-work clock of one thread (see the module). Sample it with :meth:`advance`
    from another thread."""

    cpu_clock: int | None
    stat: Path | None
    _last_wall: float = field(default_factory=time.monotonic, init=False)
    _last_cpu: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._last_cpu = self.cpu_s()

    @classmethod
    def of_current_thread(cls) -> ThreadClock:
        """The clock of the calling thread."""
        try:
            cpu_clock: int | None = time.pthread_getcpuclockid(threading.get_ident())
        except (AttributeError, OSError):
            cpu_clock = None
        stat = Path(f"/proc/self/task/{threading.get_native_id()}/stat")
        return cls(cpu_clock, stat if stat.exists() else None)

    def cpu_s(self) -> float | None:
        """The thread's CPU time so far, or ``None`` where it cannot be read."""
        if self.cpu_clock is None:
            return None
        try:
            return time.clock_gettime(self.cpu_clock)
        except OSError:  # the thread ended
            return None

    def waiting(self) -> bool | None:
        """Whether the thread is waiting in the kernel now (``None``: unknown)."""
        if self.stat is None:
            return None
        try:
            text = self.stat.read_text()
        except OSError:
            return None
        # "<tid> (<name>) <state> ...": the name may hold spaces and parentheses
        fields = text.rsplit(")", 1)[-1].split()
        return bool(fields) and fields[0] in _WAITING

    def advance(self) -> float:
        """The thread's own work since the last call (or since the clock was made): the
        CPU time it used, or the whole stretch if it is waiting in the kernel now."""
        now, cpu = time.monotonic(), self.cpu_s()
        wall = now - self._last_wall
        used = None if cpu is None or self._last_cpu is None else cpu - self._last_cpu
        self._last_wall, self._last_cpu = now, cpu
        waiting = self.waiting()
        if used is None or waiting is None or waiting:
            return wall
        return min(max(used, 0.0), wall)

    def restart(self) -> None:
        """Start the next :meth:`advance` from now."""
        self._last_wall, self._last_cpu = time.monotonic(), self.cpu_s()
