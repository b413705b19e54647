"""Keys read at a real terminal (a pseudo-terminal here): a key pressed before the
program asks for it is read, not dropped when the terminal is switched to read keys."""

from __future__ import annotations

import os
import pty
import threading
from collections.abc import Iterator

import pytest

from agentflow_eval.cli.review_keys import KeyReader


@pytest.fixture
def terminal() -> Iterator[tuple[int, KeyReader]]:
    """The keyboard's end of a pseudo-terminal, and a reader at the program's end."""
    keyboard, screen = pty.openpty()
    stream = os.fdopen(screen, "r", encoding="utf-8", closefd=True)
    try:
        yield keyboard, KeyReader(stream)
    finally:
        stream.close()
        os.close(keyboard)


def _read_key(reader: KeyReader, keyboard: int) -> str:
    got: list[str] = []
    reading = threading.Thread(target=lambda: got.append(reader.key()), daemon=True)
    reading.start()
    reading.join(timeout=5)
    if reading.is_alive():  # the typed-ahead key was dropped: unblock the reader
        os.write(keyboard, b"z")
        reading.join(timeout=5)
    return got[0]


def test_a_key_typed_ahead_is_read(terminal: tuple[int, KeyReader]) -> None:
    keyboard, reader = terminal
    assert reader.at_terminal
    os.write(keyboard, b"5")  # pressed while the terminal is still in line mode
    assert _read_key(reader, keyboard) == "5"


def test_a_line_then_a_key_typed_at_once(terminal: tuple[int, KeyReader]) -> None:
    keyboard, reader = terminal
    os.write(keyboard, b"checked the tool call\n5")
    assert reader.line() == "checked the tool call"
    assert _read_key(reader, keyboard) == "5"
