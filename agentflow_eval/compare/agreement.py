"""The judges people checked in both runs of a comparison: each side's agreement and κ,
and the criterion's pass rate corrected for the judge's error on each side, with the
change. Descriptive, as the criterion means are: the tests are on the pass counts."""

from __future__ import annotations

import math

from agentflow_eval.compare.models import JudgeAgreementChange
from agentflow_eval.models.agreement import Estimate
from agentflow_eval.models.results import RunResult

__all__ = ["judge_agreement_changes"]

_Z95 = 1.959963984540054


def judge_agreement_changes(
    baseline: RunResult, candidate: RunResult
) -> list[JudgeAgreementChange]:
    """Each criterion both runs measured against labels (the candidate's order)."""
    before = {agreement.criterion: agreement for agreement in baseline.judge_agreement}
    changes = []
    for after in candidate.judge_agreement:
        old = before.get(after.criterion)
        if old is None:
            continue
        changes.append(
            JudgeAgreementChange(
                criterion=after.criterion,
                label=after.label or old.label,
                baseline_agreement=old.agreement,
                candidate_agreement=after.agreement,
                baseline_kappa=old.kappa,
                candidate_kappa=after.kappa,
                baseline_corrected=old.corrected_pass_rate,
                candidate_corrected=after.corrected_pass_rate,
                corrected_change=_difference(old.corrected_pass_rate, after.corrected_pass_rate),
                untrustworthy=[
                    side
                    for side, agreement in (("baseline", old), ("candidate", after))
                    if agreement.untrustworthy
                ],
            )
        )
    return changes


def _difference(before: Estimate | None, after: Estimate | None) -> Estimate | None:
    """``after − before``, its 95% interval from each side's read as a normal interval
    (standard error: its width over 2·1.96), the two independent."""
    if before is None or after is None:
        return None
    spread = math.hypot(
        (before.high - before.low) / (2 * _Z95), (after.high - after.low) / (2 * _Z95)
    )
    change = after.value - before.value
    return Estimate(
        value=change,
        low=max(-1.0, change - _Z95 * spread),
        high=min(1.0, change + _Z95 * spread),
    )
