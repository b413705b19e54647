"""What an agent prints is its trial's, not the run's output.

While the trial stage runs, ``sys.stdout`` and ``sys.stderr`` are :class:`RoutedStream`
proxies: a write made in a trial's context (the trial's coroutine, the tasks it creates,
the worker threads of a synchronous agent, and the threads its code starts — see
:mod:`agentflow_eval.run.trial_scope`) goes to that trial's :class:`OutputSink`; any other
write goes where it went before. So ``agentflow-eval run --json`` stays JSON however
chatty the agent, and nothing the agent prints reaches a terminal unredacted.

Each stream keeps its first :data:`OUTPUT_LIMIT_BYTES` bytes (a little more is held so
a secret cut by the limit is still recognised and redacted), counts the rest, and ends
with ``… N bytes more``: a trial's memory stays bounded however much the agent prints.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from typing import Any, TextIO

from agentflow_eval.redaction import redact

__all__ = ["OUTPUT_LIMIT_BYTES", "OutputSink", "RoutedStream", "clip_output"]

OUTPUT_LIMIT_BYTES = 16 * 1024
"""Bytes of each stream (stdout, stderr) a trial keeps of what the agent printed."""

_SLACK_BYTES = 512
"""Held past the limit so a secret straddling it is redacted before the cut."""


class OutputSink:
    """One stream of one trial: the first bytes written, and how many there were.
    Thread-safe; once :meth:`close` d, writes are dropped (an abandoned thread still
    printing after its trial ended)."""

    def __init__(self, limit_bytes: int = OUTPUT_LIMIT_BYTES) -> None:
        self.limit_bytes = limit_bytes
        self._held: list[bytes] = []
        self._held_bytes = 0
        self.total_bytes = 0
        self._closed = False
        self._lock = threading.Lock()

    def write(self, text: str) -> None:
        data = text.encode("utf-8", errors="replace")
        with self._lock:
            if self._closed:
                return
            self.total_bytes += len(data)
            room = self.limit_bytes + _SLACK_BYTES - self._held_bytes
            if room > 0:
                self._held.append(data[:room])
                self._held_bytes += min(room, len(data))

    def close(self) -> str:
        """Stop taking writes; what was written, redacted and clipped (see
        :func:`clip_output`)."""
        with self._lock:
            self._closed = True
            held = b"".join(self._held).decode("utf-8", errors="replace")
            return clip_output(redact(held), self.total_bytes, self.limit_bytes)


def clip_output(text: str, total_bytes: int, limit_bytes: int) -> str:
    """``text`` cut to ``limit_bytes`` (UTF-8, on a character boundary), ending with
    ``… N bytes more`` when the ``total_bytes`` written were more than the limit."""
    data = text.encode("utf-8")
    if total_bytes <= limit_bytes and len(data) <= limit_bytes:
        return text
    kept = data[:limit_bytes].decode("utf-8", errors="ignore")
    more = max(total_bytes - limit_bytes, 0)
    return f"{kept}\n… {more} bytes more"


class RoutedStream(io.TextIOBase):
    """A text stream standing in for ``sys.stdout`` or ``sys.stderr``: each write goes to
    the sink ``route`` names for the writer's context, else to ``fallback``; everything
    else (``fileno``, ``isatty``, ``encoding``, ...) is the fallback's."""

    def __init__(self, fallback: TextIO, route: Callable[[], OutputSink | None], name: str) -> None:
        super().__init__()
        self.fallback = fallback
        self._route = route
        self._name = name

    def write(self, text: str) -> int:
        sink = self._route()
        if sink is None:
            return self.fallback.write(text)
        sink.write(text)
        return len(text)

    @property
    def buffer(self) -> Any:
        """The byte stream under it: the trial's too, for ``sys.stdout.buffer.write``."""
        sink = self._route()
        if sink is None:
            return self.fallback.buffer
        return _SinkBuffer(sink)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._route() is None:
            self.fallback.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._route() is None and self.fallback.isatty()

    def fileno(self) -> int:
        return self.fallback.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.fallback, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.fallback, "errors", None)

    @property
    def name(self) -> str:
        return self._name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.fallback, attribute)


class _SinkBuffer:
    """Bytes written to a routed stream's ``buffer``, into the trial's sink."""

    def __init__(self, sink: OutputSink) -> None:
        self._sink = sink

    def write(self, data: bytes) -> int:
        self._sink.write(bytes(data).decode("utf-8", errors="replace"))
        return len(data)

    def flush(self) -> None:
        pass
