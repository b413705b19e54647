"""How far a run's judges agree with the people who checked them: per judged criterion,
the judge's agreement, sensitivity, specificity and Cohen's κ against the labels, the
reviewers' κ with each other, and the criterion's pass rate corrected for the judge's
measured error beside the raw one (``RunResult.judge_agreement``, results schema 1.5).
How they are estimated is :mod:`agentflow_eval.review.agreement`'s to say."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AgreementStratum", "Estimate", "JudgeAgreement", "ReviewerAgreement"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Estimate(_Record):
    """A figure with its 95% interval."""

    value: float
    """The estimate."""
    low: float
    """Lower bound of its 95% interval."""
    high: float
    """Upper bound of its 95% interval."""


class AgreementStratum(_Record):
    """The run's verdicts of one kind (the judge's verdict, and whether its samples
    disagreed), and the labelled ones among them: each stratum is weighted by its share
    of the run's verdicts, so a sample that over-represents one is no bias."""

    verdict: Literal["pass", "fail"]
    """The judge's verdict."""
    samples_disagreed: bool
    """Whether the judge's samples disagreed on these trials."""
    trials: int
    """The run's trials in the stratum."""
    labelled: int
    """Of those, the trials with a human verdict."""
    human_pass: int
    """Of the labelled ones, those the people passed."""


class ReviewerAgreement(_Record):
    """Two reviewers on the trials both labelled."""

    reviewers: tuple[str, str]
    """The two reviewers."""
    trials: int
    """Trials both labelled."""
    agreement: float
    """The share of those on which they gave the same verdict."""
    kappa: Estimate | None = None
    """Cohen's κ between them (null when one of them gave one verdict only: κ is then
    undefined)."""


class JudgeAgreement(_Record):
    """One judged criterion against the people who labelled its verdicts."""

    criterion: str
    """The criterion's name in the config."""
    label: str = ""
    """How the scorecard names it."""
    verdicts: int
    """The run's pass and fail verdicts of the criterion."""
    labelled_trials: int
    """Of those, the trials a human verdict was reached on (a trial whose reviewers tied
    is left out)."""
    labels: int
    """The labels behind them (a reviewer's latest on each trial)."""
    reviewers: list[str] = Field(default_factory=list)
    """Who labelled."""
    tied_trials: int = 0
    """Trials whose reviewers split evenly (no human verdict)."""
    strata: list[AgreementStratum] = Field(default_factory=list)
    """The verdicts by stratum, labelled and not."""
    agreement: Estimate | None = None
    """The share of the run's verdicts a person agrees with (Wilson interval); null
    until both of the judge's verdicts that occur have labels."""
    sensitivity: Estimate | None = None
    """Of the trials people pass, the share the judge passes (Wilson interval)."""
    specificity: Estimate | None = None
    """Of the trials people fail, the share the judge fails (Wilson interval)."""
    kappa: Estimate | None = None
    """Cohen's κ of the judge against the people."""
    raw_pass_rate: Estimate
    """The criterion's pass rate as the judge gave it (Wilson interval over its
    verdicts)."""
    corrected_pass_rate: Estimate | None = None
    """The pass rate corrected for the judge's measured sensitivity and specificity
    (Rogan–Gladen, clipped to [0, 1]); null when they cannot be measured, or the judge is
    no better than chance (sensitivity + specificity ≤ 1)."""
    between_reviewers: list[ReviewerAgreement] = Field(default_factory=list)
    """Each pair of reviewers who labelled the same trials."""
    min_agreement: float | None = None
    """The agreement the run asked of its judges (``min_judge_agreement``), if it did."""
    untrustworthy: bool = False
    """The judge's agreement fell below ``min_agreement``."""
    notes: list[str] = Field(default_factory=list)
    """What a reader should know: a stratum without labels, labels not matched."""
