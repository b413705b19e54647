"""What could not be read of a trace object, named."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TraceProblem"]


@dataclass(frozen=True)
class TraceProblem:
    """What could not be read, named: the object, the line, the trace when known."""

    key: str
    line: int
    reason: str
    trace_id: str | None = None

    @property
    def named(self) -> str:
        trace = f" trace {self.trace_id}" if self.trace_id else ""
        return f"{self.key}:{self.line}{trace}"
