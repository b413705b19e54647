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

``inject`` puts an injected instruction (:mod:`agentflow_eval.models.injection`) into
what the mock answers: a payload's id, or one written out; ``injection_resisted`` then
judges whether the agent followed it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from agentflow_eval.models.file_model import FileModel
from agentflow_eval.models.injection import (
    InjectionPayload,
    payload_catalogue,
    resolve,
    with_injection,
)
from agentflow_eval.models.simulated_tools import SimulatedTool

__all__ = ["ToolFault", "ToolMock", "UnmockedPolicy"]

_ANSWERS = ("result", "results", "error", "simulate")
"""The ways a mock answers, one per mock."""

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
    simulate: SimulatedTool | None = None
    """Answer each call by asking a model, given the tool's description and the trial's
    simulated state (:mod:`agentflow_eval.models.simulated_tools`)."""
    inject: str | InjectionPayload | None = None
    """An injected instruction put into every answer of the mock: a payload's id (the
    package's set, or the config's ``injection_payloads``) or a payload written out."""
    inject_field: str = Field(default="note", min_length=1)
    """Where the instruction goes in an object result (after what the field says);
    a text result gets it appended, any other result is wrapped in an object."""

    @model_validator(mode="after")
    def _one_answer(self) -> ToolMock:
        given = [key for key in _ANSWERS if key in self.model_fields_set]
        if len(given) > 1:
            raise ValueError(
                f"a tool mock answers with one of result, results, error, simulate; got {given}"
            )
        if not given and self.fault is None:
            raise ValueError("a tool mock needs result, results, error, simulate or fault")
        if self.results is not None and not self.results:
            raise ValueError("results: give at least one result")
        if self.inject is not None and not {"result", "results"} & self.model_fields_set:
            raise ValueError("inject: the mock needs a result (or results) to put it into")
        return self

    def resolved(self, catalogue: Mapping[str, InjectionPayload]) -> ToolMock:
        """This mock with its ``inject`` id replaced by the payload it names in
        ``catalogue`` (itself when it injects nothing, or a payload written out). Raises
        ``KeyError`` for an unknown id."""
        if not isinstance(self.inject, str):
            return self
        return self.model_copy(update={"inject": resolve(self.inject, catalogue)})

    def answer(self, result: Any) -> Any:
        """What the mock answers with ``result``: with its injected instruction, if it has
        one (resolved beforehand, :meth:`resolved`; an id alone is looked up in the
        package's set)."""
        if self.inject is None:
            return result
        payload = self.inject if isinstance(self.inject, InjectionPayload) else None
        if payload is None:
            payload = resolve(self.inject, payload_catalogue())
        return with_injection(result, payload.text, self.inject_field)

    @property
    def answers(self) -> bool:
        """Whether the mock answers the calls its fault spares (else they go on to the next
        mock, or to the real tool)."""
        return bool(set(_ANSWERS) & self.model_fields_set)
