"""A run command's stdout holds its result and nothing else.

An agent's ``print`` goes to its trial (:mod:`agentflow_eval.run.agent_output`), and so
does the output of a child it starts through ``subprocess``; but native code writing to
file descriptor 1, a child started otherwise (``os.system``) or one the agent started
before a trial would still reach the terminal's stdout, ahead of ``--json``'s summary.
So for the whole of a run command, descriptor 1 is a copy of descriptor 2: whatever
anyone in the process (or a child it starts) writes there goes to stderr. The real
stdout is kept aside, open, for the command's result (the scorecard, the summary line,
the JSON) — :attr:`ResultStdout.stream` — and put back when the command ends.

When ``sys.stdout`` is not the stream over descriptor 1 (a caller replaced it: an
embedding program, pytest's ``capsys``), the result goes to ``sys.stdout`` as it was,
which is where that caller looks for it.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from dataclasses import dataclass
from typing import TextIO

__all__ = ["ResultStdout", "reserve_stdout"]


@dataclass
class ResultStdout:
    """The command's stdout, kept for its result while descriptor 1 points at stderr."""

    stream: TextIO
    """Where the command prints its result."""
    saved_fd: int | None = None
    """A copy of the real descriptor 1, put back by :meth:`release` (``None``: nothing
    was moved)."""

    def release(self) -> None:
        """Flush the result and give descriptor 1 back its real stdout."""
        for stream in (self.stream, sys.stdout):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.flush()
        if self.saved_fd is None:
            return
        with contextlib.suppress(OSError):
            os.dup2(self.saved_fd, 1)
        if self.stream is not sys.stdout:
            with contextlib.suppress(OSError, ValueError):
                self.stream.close()  # closes its own copy of the descriptor
        else:
            with contextlib.suppress(OSError):
                os.close(self.saved_fd)
        self.saved_fd = None


def reserve_stdout() -> ResultStdout:
    """Keep the real stdout for the command's result and point descriptor 1 at stderr
    (see the module); :meth:`ResultStdout.release` undoes it."""
    current = sys.stdout
    with contextlib.suppress(OSError, ValueError, AttributeError):
        current.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no descriptor 1 at all: nothing to keep aside
        return ResultStdout(stream=current)
    try:
        os.dup2(2, 1)
    except OSError:  # no stderr to point it at: leave stdout as it is
        os.close(saved)
        return ResultStdout(stream=current)
    if not _writes_to_fd_1(current):
        return ResultStdout(stream=current, saved_fd=saved)
    stream = io.TextIOWrapper(
        io.FileIO(saved, "w", closefd=True),
        encoding=getattr(current, "encoding", None) or "utf-8",
        errors=getattr(current, "errors", None) or "strict",
        line_buffering=bool(getattr(current, "line_buffering", False)),
    )
    return ResultStdout(stream=stream, saved_fd=saved)


def _writes_to_fd_1(stream: TextIO | None) -> bool:
    if stream is None:
        return False
    try:
        return stream.fileno() == 1
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both
        return False
