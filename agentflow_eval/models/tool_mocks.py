"""Tool mocks as files write them: what a mocked tool returns instead of running, and the
faults injected into tool calls.

A mock is matched by the tool's name and, when it gives ``args``, by those arguments being
a subset of the call's (the first matching mock wins). It answers with one ``result``, a
sequence of ``results`` (one per matching call, the last repeating), or an ``error``,
after an optional ``latency_ms``. A ``fault`` injects an error or a timeout into a share
of the matching calls, drawn from a seeded generator so a run can be repeated; the calls
it spares are answered by the mock's answer, or, when the entry gives none, by the next
matching mock or the real tool.

Mocks come from the config (every case), a case, or one of its turns; the turn's are tried
first, then the case's, then the config's. ``unmocked_tools`` says what happens to a call
no mock answers: the real tool runs (``run``), or the call fails (``fail``) with a message
naming the tool and its arguments.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from agentflow_eval.models.file_model import FileModel

__all__ = ["ToolFault", "ToolMock", "UnmockedPolicy"]

UnmockedPolicy = Literal["run", "fail"]
"""What a call no mock answers does: run the real tool, or fail the call."""


class ToolFault(FileModel):
    """A fault injected into a share of a tool's calls."""

    kind: Literal["error", "timeout"] = "error"
    """An error the tool raises, or a timeout (the call never answers in time)."""
    probability: float = Field(ge=0.0, le=1.0)
    """The share of matching calls that fail, drawn independently for each call."""
    message: str | None = None
    """The error's message (default: one naming the tool and the fault)."""
    seed: int = 0
    """Seeds the draws: with the case and the trial, the same calls fail on every run."""


class ToolMock(FileModel):
    """A stand-in for a tool's calls (see the module)."""

    tool: str = Field(min_length=1)
    """The tool's name, as the agent calls it."""
    args: dict[str, Any] | None = None
    """Arguments a call must have (a subset of the call's; nested objects too, see
    :func:`~agentflow_eval.models.matching.json_subset`); none: every call of the tool."""
    result: Any = None
    """What the tool returns."""
    results: list[Any] | None = None
    """What the tool returns on the first, second, ... matching call; the last repeats."""
    error: str | None = None
    """The tool fails with this message."""
    latency_ms: float = Field(default=0.0, ge=0.0)
    """How long the mocked call takes."""
    fault: ToolFault | None = None
    """A fault injected into a share of the matching calls."""

    @model_validator(mode="after")
    def _one_answer(self) -> ToolMock:
        given = [key for key in ("result", "results", "error") if key in self.model_fields_set]
        if len(given) > 1:
            raise ValueError(f"a tool mock answers with one of result, results, error; got {given}")
        if not given and self.fault is None:
            raise ValueError("a tool mock needs result, results, error or fault")
        if self.results is not None and not self.results:
            raise ValueError("results: give at least one result")
        return self

    @property
    def answers(self) -> bool:
        """Whether the mock answers the calls its fault spares (else they go on to the next
        mock, or to the real tool)."""
        return bool({"result", "results", "error"} & self.model_fields_set)
