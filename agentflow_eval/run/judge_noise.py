"""How much of a criterion's verdicts is its LLM judge's noise, read from the samples the
judge already takes (``num_samples`` of 2 or more).

For each judged turn, the chance that two of its samples, drawn without replacement,
disagree (``1 - Σ n_k (n_k - 1) / (n (n - 1))`` over the verdicts' counts): asked again,
a judge that split would answer otherwise that often. Over a run, its mean is how often
the judge's verdict on the same answer flips between samples.

A trial's verdict counts as firmly as its votes (:func:`~.pass_value.judge_firmness`):
``v``, its share of votes for a pass. Asked again, the verdict would vary by about
``v (1 - v)``; the criterion's pass rate over the trials varies by ``p (1 - p)``. Their
ratio is the share of the pass rate's variance the judge's noise explains.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from agentflow_eval.models.results import CriterionResult
from agentflow_eval.run.pass_value import judge_firmness

__all__ = ["JudgeNoise", "sample_disagreement"]


def _verdicts(row: Any) -> list[str]:
    votes = row.get("votes") if isinstance(row, dict) else None
    return [str(v.get("verdict")) if isinstance(v, dict) else str(v) for v in votes or []]


def sample_disagreement(result: CriterionResult) -> float | None:
    """The mean, over the turns judged with 2 samples or more, of the chance that two of
    their samples disagree (``None``: no turn had 2)."""
    chances = []
    for row in result.details.get("invocations", []) or []:
        verdicts = _verdicts(row)
        n = len(verdicts)
        if n < 2:
            continue
        same = sum(k * (k - 1) for k in Counter(verdicts).values()) / (n * (n - 1))
        chances.append(1 - same)
    return sum(chances) / len(chances) if chances else None


@dataclass
class JudgeNoise:
    """A criterion's judge noise over the trials it judged with several samples."""

    disagreements: list[float] = field(default_factory=list)
    passes: list[float] = field(default_factory=list)
    """Each trial's pass as firmly as its votes give it."""

    def add(self, result: CriterionResult) -> None:
        if result.status not in ("passed", "failed"):
            return
        disagreement = sample_disagreement(result)
        if disagreement is None:
            return
        self.disagreements.append(disagreement)
        firmness = judge_firmness(result)
        self.passes.append(firmness if result.status == "passed" else 1 - firmness)

    def merge(self, other: JudgeNoise) -> None:
        self.disagreements.extend(other.disagreements)
        self.passes.extend(other.passes)

    @property
    def trials(self) -> int:
        return len(self.disagreements)

    @property
    def split_trials(self) -> int:
        return sum(1 for value in self.disagreements if value > 0)

    @property
    def flip_rate(self) -> float | None:
        """How often two samples on the same answer disagree."""
        return sum(self.disagreements) / self.trials if self.trials else None

    @property
    def variance_share(self) -> float | None:
        """The share of the pass rate's variance the judge's noise explains (``None``
        with no trial, or a pass rate of 0 or 1 with no noise to explain)."""
        if not self.passes:
            return None
        mean = sum(self.passes) / len(self.passes)
        total = mean * (1 - mean)
        if total <= 0:
            return None
        noise = sum(v * (1 - v) for v in self.passes) / len(self.passes)
        return min(1.0, noise / total)
