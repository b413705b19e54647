"""Telling a user's Ctrl-C from an agent's own ``KeyboardInterrupt``.

An agent's code may raise ``KeyboardInterrupt`` or ``SystemExit`` itself (a library that
calls ``sys.exit``, a tool that re-raises an interrupt): that is the trial's failure, and
the run goes on. A Ctrl-C pressed by the user stops the run. Under ``asyncio.run`` a
Ctrl-C arrives as a cancellation, never as a ``KeyboardInterrupt`` inside a trial; where
Python's default handler is in place (the main thread of a plain program, pytest), it is
raised wherever the main thread is — possibly inside an agent. :class:`SigintSeen`
records whether the signal really came while the trials ran, so a trial can tell.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["SigintSeen"]


class SigintSeen:
    """Whether SIGINT arrived while :meth:`watching` (see the module)."""

    def __init__(self) -> None:
        self.received = False

    @contextlib.contextmanager
    def watching(self) -> Iterator[SigintSeen]:
        """Record SIGINT while the block runs, when Python's default handler would turn
        it into a ``KeyboardInterrupt`` (it still does: only the record is added)."""
        main = threading.current_thread() is threading.main_thread()
        if not main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            yield self
            return

        def interrupted(signum: int, frame: FrameType | None) -> None:
            self.received = True
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGINT, interrupted)
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)
