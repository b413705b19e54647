"""What a finished run is held to, decided once for every front door: the request's
pass-rate gates (``min_pass_rate`` over the run, ``min_case_pass_rate`` for each case),
its regression gate (``fail_on_regression`` with a baseline), whether the run measured
anything at all, and which judges fell below the agreement with people it asked
(``min_judge_agreement``: named, not a gate). Each door renders the verdict its own way
(the CLI as an exit code, the flow as a Failed state, ``AgentEvaluator`` as an
exception); none of them decides it again, and each says the shortfalls in the words
given here."""

from __future__ import annotations

from dataclasses import dataclass

from agentflow_eval.compare.models import RunComparison
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.agreement_text import untrustworthy_judges, untrustworthy_text

__all__ = ["GateVerdict", "PassRateGates", "gate_verdict", "verdict_of"]


@dataclass(frozen=True)
class PassRateGates:
    """The request's pass-rate gates (``None`` or 0: no such gate)."""

    min_pass_rate: float | None = None
    min_case_pass_rate: float | None = None

    @classmethod
    def of(cls, request: RunRequest) -> PassRateGates:
        return cls(request.min_pass_rate or None, request.min_case_pass_rate or None)


@dataclass(frozen=True)
class GateVerdict:
    """How a run fared against its request's gates."""

    min_pass_rate: float | None = None
    """The pass rate the request asked for (``None``: no such gate)."""
    shortfalls: tuple[str, ...] = ()
    """Each pass-rate gate the run fell short of, in a line naming the setting."""
    regression: RunComparison | None = None
    """With ``fail_on_regression``: the comparison that failed its gate (it regressed, or
    its baseline could not be read); ``None`` when the gate held or was not asked for."""
    measured_nothing: bool = False
    """Every trial errored: the run says nothing about the agent."""
    untrustworthy_judges: tuple[str, ...] = ()
    """Each judge whose agreement with people fell below ``min_judge_agreement``, in a
    line naming it: said by every door, never a failed gate (the run's verdicts are
    reported as the judges gave them, beside the corrected pass rates)."""

    @property
    def failed(self) -> bool:
        """Whether a gate the request set failed (a run that measured nothing fails only
        where a door says so: it is no gate of the request)."""
        return bool(self.shortfalls) or self.regression is not None

    def reasons(self) -> list[str]:
        """Each failed gate in a line, the regression first."""
        found = []
        if self.regression is not None:
            found.append(
                "a significant regression from the baseline"
                if self.regression.regressed
                else "the baseline could not be read, so a regression cannot be ruled out"
            )
        return [*found, *self.shortfalls]


def gate_verdict(
    request: RunRequest, run: RunResult, comparison: RunComparison | None
) -> GateVerdict:
    """The verdict of ``request``'s gates on ``run`` (compared as ``comparison`` says)."""
    return verdict_of(PassRateGates.of(request), run, comparison)


def verdict_of(
    gates: PassRateGates, run: RunResult, comparison: RunComparison | None
) -> GateVerdict:
    """The verdict of the pass-rate ``gates`` and of ``comparison``'s regression gate on
    ``run``."""
    totals = run.totals
    shortfalls = []
    minimum = gates.min_pass_rate or None  # 0 is no gate, as the form's default says
    if minimum is not None and totals.pass_rate < minimum:
        shortfalls.append(
            f"pass rate {totals.pass_rate:.0%} ({totals.passed} of {totals.rated_trials} "
            f"trials) is below min_pass_rate {minimum:.0%}"
        )
    floor = gates.min_case_pass_rate or None
    short_cases = [case for case in run.cases if floor is not None and case.pass_rate < floor]
    if floor is not None and short_cases:
        named = ", ".join(f"{case.case_id} {case.pass_rate:.0%}" for case in short_cases[:5])
        more = f" and {len(short_cases) - 5} more" if len(short_cases) > 5 else ""
        shortfalls.append(
            f"{len(short_cases)} case(s) below min_case_pass_rate {floor:.0%}: {named}{more}"
        )
    return GateVerdict(
        min_pass_rate=minimum,
        shortfalls=tuple(shortfalls),
        regression=comparison if comparison is not None and comparison.gate_failed else None,
        measured_nothing=bool(totals.trials) and totals.errored == totals.trials,
        untrustworthy_judges=tuple(untrustworthy_text(a) for a in untrustworthy_judges(run)),
    )
