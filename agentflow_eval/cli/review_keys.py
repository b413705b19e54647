"""Keys a person presses at the terminal, one at a time, for ``agentflow-eval review``.

At a terminal, each key is read as it is pressed (the terminal in cbreak mode for the
read, put back after it); from a pipe, each line is an answer (its first character a key,
or the whole line where a text is asked for), so a script can feed a review too."""

from __future__ import annotations

import contextlib
import os
import sys
import termios
import tty
from collections.abc import Iterator
from typing import TextIO

__all__ = ["KeyReader"]

CTRL_C = "\x03"
CTRL_D = "\x04"


class KeyReader:
    """Reads single keys (and lines of text) from ``stream``."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdin

    @property
    def at_terminal(self) -> bool:
        return self._stream.isatty()

    def key(self) -> str:
        """The next key pressed, lower-cased; ``q`` at the end of the input (Ctrl-D, a
        pipe that ran dry); Ctrl-C raises :class:`KeyboardInterrupt`."""
        if not self.at_terminal:
            line = self._stream.readline()
            return line.strip()[:1].lower() if line else "q"
        with self._cbreak():
            char = os.read(self._stream.fileno(), 1).decode(errors="replace")
        if char == CTRL_C:
            raise KeyboardInterrupt
        if char in ("", CTRL_D):
            return "q"
        return char.lower()

    def line(self) -> str:
        """A line of text, typed and ended with Enter (echoed as it is typed)."""
        return self._stream.readline().rstrip("\r\n")

    @contextlib.contextmanager
    def _cbreak(self) -> Iterator[None]:
        fd = self._stream.fileno()
        saved = termios.tcgetattr(fd)
        try:
            # at once, keeping what was typed ahead (the default, TCSAFLUSH, would drop a
            # key pressed while the previous answer was still being written)
            tty.setcbreak(fd, termios.TCSANOW)
            yield
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
