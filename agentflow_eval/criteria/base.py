"""The criterion interface: a criterion looks at one trial of one case and returns a
:class:`CriterionResult`: a score in [0, 1] that passes at ``score >= threshold``, or
"not evaluated" with the reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalCase
from agentflow_eval.models.results import CriterionResult, Trial, Usage

if TYPE_CHECKING:
    from agentflow_eval.criteria.judges.runtime import JudgeRuntime

__all__ = [
    "Criterion",
    "CriterionContext",
    "not_evaluated",
    "scored",
    "skipped",
]


@dataclass(frozen=True)
class CriterionContext:
    """What a criterion is given for one trial."""

    case: EvalCase
    trial: Trial
    config: EvalConfig = field(default_factory=EvalConfig)
    judge: JudgeRuntime | None = None
    """The run's judge runtime (model client, limits, retries, cache), passed by the judge
    stage; LLM-judge criteria cannot give a verdict without one."""


@runtime_checkable
class Criterion(Protocol):
    """Judges one trial. ``name`` is the config key; ``label`` is shown in scorecards."""

    @property
    def name(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def threshold(self) -> float: ...

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult: ...


def scored(
    criterion: Criterion,
    score: float,
    details: dict[str, Any] | None = None,
    *,
    reason: str | None = None,
    usage: Usage | None = None,
    latency_ms: float | None = None,
    score_range: tuple[float, float] = (0.0, 1.0),
) -> CriterionResult:
    """A verdict: ``passed`` when ``score >= threshold``. The score is held to
    ``score_range``: [0, 1], or the scale a criterion ADK defines on another one uses
    (``response_evaluation_score``: 1 to 5)."""
    low, high = score_range
    score = min(high, max(low, float(score)))
    return CriterionResult(
        criterion=criterion.name,
        label=criterion.label,
        status="passed" if score >= criterion.threshold else "failed",
        score=score,
        threshold=criterion.threshold,
        reason=reason,
        details=details or {},
        usage=usage,
        latency_ms=latency_ms,
    )


def not_evaluated(
    criterion: Criterion,
    reason: str,
    details: dict[str, Any] | None = None,
    *,
    usage: Usage | None = None,
    latency_ms: float | None = None,
) -> CriterionResult:
    """No verdict: the criterion could not judge this trial, and ``reason`` says why."""
    return CriterionResult(
        criterion=criterion.name,
        label=criterion.label,
        status="not_evaluated",
        threshold=criterion.threshold,
        reason=reason,
        details=details or {},
        usage=usage,
        latency_ms=latency_ms,
    )


def threshold_of(config: CriterionConfig, default: float) -> float:
    return default if config.threshold is None else config.threshold


def skipped(criterion: Criterion, reason: str) -> CriterionResult:
    """Nothing to judge: the case gives this criterion no reference (it neither passes nor
    fails the trial)."""
    return CriterionResult(
        criterion=criterion.name,
        label=criterion.label,
        status="skipped",
        threshold=criterion.threshold,
        reason=reason,
    )
