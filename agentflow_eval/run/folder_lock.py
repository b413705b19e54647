"""One owner per run folder: a lock file that two processes cannot both hold.

Two processes appending to one ``trials.jsonl`` (two ``--resume`` of the same folder at
once, say) run every trial twice and write every line twice. The first process to open
a run folder takes its lock (``.agentflow.lock``); a second one is refused with one line
naming the holder (pid, host, since when) until the first lets go.

The lock is an advisory ``flock`` on that file, held for as long as the owner keeps the
file open: the kernel drops it when the process ends, however it ends, so the lock of a
killed run is taken over by the next one without anyone deleting anything. The file's
content (the holder's pid, host and start time) is there to name the holder in the
message. A folder holding a symbolic link is refused, and the lock file is never opened
through one (:mod:`agentflow_eval.files.no_follow`): a run writes nothing through a
link. Where ``flock`` is not available the lock is the file's existence, and a lock
left by a process of this host that is no longer running is taken over.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import weakref
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from agentflow_eval.errors import InputError
from agentflow_eval.files.limits import read_json_file
from agentflow_eval.files.no_follow import open_no_follow, refuse_links

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_NAME", "LockHolder", "RunFolderBusy", "RunFolderLock"]

LOCK_NAME = ".agentflow.lock"


class RunFolderBusy(InputError, RuntimeError):
    """Another process holds the run folder."""


@dataclass(frozen=True)
class LockHolder:
    """Who holds a run folder."""

    pid: int
    host: str
    started: str

    @classmethod
    def me(cls) -> LockHolder:
        return cls(
            pid=os.getpid(),
            host=socket.gethostname(),
            started=datetime.now(UTC).isoformat(timespec="seconds"),
        )

    @classmethod
    def read(cls, path: Path) -> LockHolder | None:
        """The holder written in the lock file, or ``None`` when it cannot be read."""
        try:
            data = read_json_file(path, what="a lock file")
            return cls(pid=int(data["pid"]), host=str(data["host"]), started=str(data["started"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def describe(self) -> str:
        here = "this host" if self.host == socket.gethostname() else f"host {self.host}"
        who = "this process" if self.is_me() else f"process {self.pid}"
        return f"{who} on {here} (since {self.started})"

    def is_me(self) -> bool:
        return self.pid == os.getpid() and self.host == socket.gethostname()

    def is_running(self) -> bool:
        """Whether the holder still runs (``True`` when that cannot be told: another
        host)."""
        if self.host != socket.gethostname():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


class RunFolderLock:
    """The lock of one run folder, held from :meth:`acquire` until :meth:`release`
    (or the process's end)."""

    def __init__(self, run_dir: Path, fd: int | None, holder: LockHolder) -> None:
        self.run_dir = run_dir
        self.path = run_dir / LOCK_NAME
        self.holder = holder
        self._fd = fd
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _close, fd, None if fd is not None else self.path)

    @classmethod
    def acquire(cls, run_dir: str | Path) -> RunFolderLock:
        """Take the lock of ``run_dir`` (which must exist), or raise
        :class:`RunFolderBusy` naming the process that holds it
        (:class:`~agentflow_eval.files.no_follow.LinkInRunFolder` for a folder holding a
        symbolic link)."""
        folder = Path(run_dir)
        path = folder / LOCK_NAME
        refuse_links(folder)
        me = LockHolder.me()
        if fcntl is None:  # pragma: no cover - not POSIX
            return cls(folder, None, _acquire_by_existence(path, me))  # type: ignore[unreachable]
        for _ in range(10):
            fd = open_no_follow(path, os.O_RDWR | os.O_CREAT)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise RunFolderBusy(_busy_message(folder, LockHolder.read(path))) from None
            except BaseException:
                os.close(fd)
                raise
            try:
                current = os.lstat(path)
            except FileNotFoundError:
                current = None
            if current is None or current.st_ino != os.fstat(fd).st_ino:
                os.close(fd)  # the file was replaced while we locked it: try the new one
                continue
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps(asdict(me)).encode("utf-8"))
            return cls(folder, fd, me)
        raise RunFolderBusy(f"{folder}: could not take the run folder's lock ({path})")

    def release(self) -> None:
        """Let go of the folder (idempotent)."""
        with self._lock:
            self._finalizer()

    @property
    def held(self) -> bool:
        return self._finalizer.alive

    def __enter__(self) -> RunFolderLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def _close(fd: int | None, path: Path | None) -> None:
    """Release: closing the file drops the ``flock`` (the file stays; its content only
    names the last holder). Without ``flock`` the file itself is the lock."""
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)
    elif path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def _busy_message(folder: Path, holder: LockHolder | None) -> str:
    who = holder.describe() if holder is not None else "another process"
    return (
        f"run folder {folder} is in use by {who}; wait for that run to finish (or stop it), "
        "then try again"
    )


def _acquire_by_existence(path: Path, me: LockHolder) -> LockHolder:  # pragma: no cover
    for _ in range(10):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = LockHolder.read(path)
            if holder is not None and holder.is_running():
                raise RunFolderBusy(_busy_message(path.parent, holder)) from None
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # a stale lock of a process that is gone
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(me)))
        return me
    raise RunFolderBusy(f"{path.parent}: could not take the run folder's lock ({path})")
