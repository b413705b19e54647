"""Expectations as criteria: ``completes``, ``calls_tool``, ``final_contains``.

Each is a plain yes/no rule on the recorded trial, scored 1.0 or 0.0 with a default
threshold of 1.0. They come from a case's ``expectations`` or from the config's criteria
(``calls_tool: {name: ...}``, ``final_contains: {text: ...}``). Labels are the scorecard
labels of the expectation models in :mod:`agentflow_eval.models.evalset`, so a case-level and a
config-level expectation read the same.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from agentflow_eval.criteria.base import CriterionContext, scored, threshold_of
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import CallsTool, Completes, FinalContains
from agentflow_eval.models.results import CriterionResult, Trial

__all__ = [
    "CallsToolCriterion",
    "CallsToolOptions",
    "CompletesCriterion",
    "FinalContainsCriterion",
    "FinalContainsOptions",
]


def _error_text(trial: Trial) -> str | None:
    return f"{trial.error.kind}: {trial.error.message}" if trial.error else None


@dataclass
class CompletesCriterion:
    """The agent finished without an error and gave a final response."""

    name: str
    threshold: float = 1.0
    label: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.label = Completes().label

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        trial = ctx.trial
        answer = trial.final_response
        ok = trial.error is None and answer is not None
        reason = None
        if trial.error is not None:
            reason = f"the trial did not finish ({_error_text(trial)})"
        elif answer is None:
            reason = "the last turn has no final response"
        details = {"error": _error_text(trial), "has_final_response": answer is not None}
        return scored(self, 1.0 if ok else 0.0, details, reason=reason)


@dataclass
class CallsToolCriterion:
    """The agent called the tool ``tool`` at least once, in any turn."""

    name: str
    tool: str
    threshold: float = 1.0
    label: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.label = CallsTool(name=self.tool).label

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        calls = Counter(call.name for call in ctx.trial.tool_calls)
        ok = calls[self.tool] > 0
        reason = None
        if not ok:
            made = ", ".join(sorted(calls)) or "none"
            reason = f"{self.tool!r} was never called (tools called: {made})"
        details = {"tool": self.tool, "times_called": calls[self.tool], "tools_called": dict(calls)}
        return scored(self, 1.0 if ok else 0.0, details, reason=reason)


@dataclass
class FinalContainsCriterion:
    """The last turn's final response contains ``text``. A trial that did not finish
    fails, whatever it said before it stopped."""

    name: str
    text: str
    case_sensitive: bool = True
    threshold: float = 1.0
    label: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.label = FinalContains(text=self.text, case_sensitive=self.case_sensitive).label

    def _contains(self, answer: str) -> bool:
        if self.case_sensitive:
            return self.text in answer
        return self.text.casefold() in answer.casefold()

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        trial = ctx.trial
        answer = trial.final_response
        reason: str | None
        if trial.error is not None:
            ok, reason = False, f"the trial did not finish ({_error_text(trial)})"
        elif answer is None:
            ok, reason = False, "the last turn has no final response"
        else:
            ok = self._contains(answer)
            reason = None if ok else f"{self.text!r} not found in the final response"
        details = {"text": self.text, "case_sensitive": self.case_sensitive, "actual": answer}
        return scored(self, 1.0 if ok else 0.0, details, reason=reason)


def _required(name: str, field: str, value: str | None, meaning: str) -> str:
    if not value:
        found = "none" if value is None else "an empty string"
        raise ValueError(f"criterion {name!r} needs {field!r}: {meaning}; found {found}")
    return value


class CallsToolOptions(CriterionOptions):
    """Options of calls_tool."""

    name: str | None = None
    """The tool that must be called."""


class FinalContainsOptions(CriterionOptions):
    """Options of final_contains."""

    text: str | None = None
    """The text the final answer must contain."""
    case_sensitive: bool = True
    """Whether case must match."""


@criterion("completes", CriterionOptions)
def build_completes(name: str, options: CriterionOptions, config: EvalConfig) -> CompletesCriterion:
    """The trial finished without an error and with a final answer (default threshold
    1.0)."""
    return CompletesCriterion(name=name, threshold=threshold_of(options, 1.0))


@criterion("calls_tool", CallsToolOptions, subject="tool_calls", repeatable=True)
def build_calls_tool(
    name: str, options: CallsToolOptions, config: EvalConfig
) -> CallsToolCriterion:
    """The agent called the tool ``name`` at least once (default threshold 1.0)."""
    tool = _required(name, "name", options.name, "the tool that must be called")
    return CallsToolCriterion(name=name, tool=tool, threshold=threshold_of(options, 1.0))


@criterion("final_contains", FinalContainsOptions, repeatable=True)
def build_final_contains(
    name: str, options: FinalContainsOptions, config: EvalConfig
) -> FinalContainsCriterion:
    """The last turn's final answer contains ``text`` (default threshold 1.0)."""
    text = _required(name, "text", options.text, "the text the final response must contain")
    return FinalContainsCriterion(
        name=name,
        text=text,
        case_sensitive=options.case_sensitive,
        threshold=threshold_of(options, 1.0),
    )
