"""The judges' agreement with people in words: the lines the scorecard, the review
command and the Prefect summary show, and the judges a run names untrustworthy."""

from __future__ import annotations

from agentflow_eval.models.agreement import Estimate, JudgeAgreement
from agentflow_eval.models.results import RunResult

__all__ = ["agreement_lines", "estimate_text", "untrustworthy_judges", "untrustworthy_text"]


def estimate_text(estimate: Estimate | None, *, percent: bool = True) -> str:
    """``80% (75%–85%)``; κ as ``0.57 (0.44 to 0.66)`` (its bounds may be negative);
    ``–`` when unmeasured."""
    if estimate is None:
        return "–"
    if percent:
        return f"{estimate.value:.0%} ({estimate.low:.0%}–{estimate.high:.0%})"
    return f"{estimate.value:.2f} ({estimate.low:.2f} to {estimate.high:.2f})"


def untrustworthy_judges(run: RunResult) -> list[JudgeAgreement]:
    """The judges whose agreement fell below what the run asked of them."""
    return [agreement for agreement in run.judge_agreement if agreement.untrustworthy]


def untrustworthy_text(agreement: JudgeAgreement) -> str:
    """``judge X is untrustworthy: it agrees with people on 78% of verdicts (…), below
    min_judge_agreement 90%``."""
    value = agreement.agreement
    assert value is not None and agreement.min_agreement is not None
    return (
        f"judge {agreement.label or agreement.criterion} is untrustworthy: people agree "
        f"with {estimate_text(value)} of its verdicts, below min_judge_agreement "
        f"{agreement.min_agreement:.0%}"
    )


def agreement_lines(run: RunResult) -> list[str]:
    """Each labelled judge: its agreement, sensitivity, specificity and κ, its pass rate
    as judged and corrected, the reviewers against each other, and what to know."""
    lines = []
    for agreement in run.judge_agreement:
        who = len(agreement.reviewers)
        lines.append(
            f"judge {agreement.label or agreement.criterion} against people "
            f"({agreement.labelled_trials} labelled of {agreement.verdicts} verdicts, "
            f"{who} reviewer{'' if who == 1 else 's'}): agreement "
            f"{estimate_text(agreement.agreement)}, sensitivity "
            f"{estimate_text(agreement.sensitivity)}, specificity "
            f"{estimate_text(agreement.specificity)}, κ "
            f"{estimate_text(agreement.kappa, percent=False)}"
        )
        corrected = agreement.corrected_pass_rate
        lines.append(
            f"  pass rate as judged {estimate_text(agreement.raw_pass_rate)}"
            + (f", corrected for the judge's error {estimate_text(corrected)}" if corrected else "")
        )
        for pair in agreement.between_reviewers:
            first, second = pair.reviewers
            lines.append(
                f"  reviewers {first} and {second} agree on {pair.agreement:.0%} of "
                f"{pair.trials} trials, κ {estimate_text(pair.kappa, percent=False)}"
            )
        if agreement.untrustworthy:
            lines.append("  UNTRUSTWORTHY: " + untrustworthy_text(agreement))
        lines.extend(f"  note: {note}" for note in agreement.notes)
    return lines
