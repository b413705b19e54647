"""A regression suite's combined result: each eval set's evaluation against its
baseline, and the suite's verdict. ``summary.json`` is :class:`SuiteSummary`; the
regression flow builds it from what each evaluate run published.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentflow_eval.compare.efficiency import efficiency_findings
from agentflow_eval.compare.models import EfficiencyFinding, RunComparison
from agentflow_eval.storage.history import RunEntry

__all__ = [
    "SUMMARY_VERSION",
    "EvalSetOutcome",
    "EvalSetStatus",
    "RegressedCase",
    "SuiteSummary",
    "SuiteVerdict",
    "failed_outcome",
    "outcome_of_published_run",
    "suite_verdict",
]

SUMMARY_VERSION = "1.1"
"""1.1: each eval set lists its significant efficiency changes for the worse
(``efficiency``), a regression when beyond a tolerance the suite gave."""

EvalSetStatus = Literal[
    "regression", "improvement", "no significant change", "not compared", "failed"
]
"""``regression``/``improvement``: significant, overall or in some case (a regression
wins); ``not compared``: evaluated, but its baseline could not be read (or there was none
yet); ``failed``: no evaluated run to show (the evaluate run failed, or was not
published)."""

SuiteVerdict = Literal["regression", "improvement", "no significant change", "incomplete"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RegressedCase(_Model):
    """A case that regressed significantly: its counts on both sides."""

    case_id: str
    baseline: str | None = None
    candidate: str | None = None
    change: float | None = None
    p_adjusted: float | None = None


class EvalSetOutcome(_Model):
    """One eval set of the suite: its evaluate run, its published run and how that run
    compares with its baseline."""

    index: int
    eval_set_id: str
    eval_set_name: str = ""
    agent: str
    status: EvalSetStatus
    flow_run: str | None = Field(default=None, description="the evaluate flow run's name")
    flow_run_state: str | None = None
    run_id: str | None = None
    report_url: str | None = None
    pass_rate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    trials: int | None = None
    baseline: str
    baseline_run_id: str | None = None
    overall_verdict: str | None = None
    change: float | None = None
    regressed_cases: list[RegressedCase] = Field(default_factory=list)
    improved_cases: list[str] = Field(default_factory=list)
    efficiency: list[EfficiencyFinding] = Field(
        default_factory=list,
        description="significant increases of cost, tokens, latency or tool calls, overall "
        "and per case (a regression when beyond its tolerance)",
    )
    problem: str | None = None
    problem_kind: str | None = None
    gate_failed: bool = False
    """The evaluate run failed its own gate (it ran with ``fail_on_regression``)."""

    @property
    def fails_gate(self) -> bool:
        """Whether this eval set fails a suite that fails on regression: it regressed, it
        has no evaluated run, or its baseline could not be read (no earlier run passes)."""
        return (
            self.gate_failed
            or self.status in ("regression", "failed")
            or self.problem_kind == "unavailable"
        )


class SuiteSummary(_Model):
    """A regression suite run: every eval set's outcome and the suite's verdict."""

    summary_version: str = SUMMARY_VERSION
    suite: str
    flow_run_id: str | None = None
    flow_run_name: str | None = None
    started_at: datetime
    finished_at: datetime
    publish_to: str
    baseline: str
    fail_on_regression: bool
    verdict: SuiteVerdict
    evals: list[EvalSetOutcome]

    @property
    def regressed(self) -> list[EvalSetOutcome]:
        return [outcome for outcome in self.evals if outcome.status == "regression"]

    @property
    def failed(self) -> list[EvalSetOutcome]:
        return [outcome for outcome in self.evals if outcome.status == "failed"]

    @property
    def gate_failed(self) -> bool:
        """Under ``fail_on_regression``: a regression, a failed evaluation, or a
        baseline that could not be read (a first run, with none yet, passes)."""
        return self.fail_on_regression and any(outcome.fails_gate for outcome in self.evals)


def suite_verdict(outcomes: list[EvalSetOutcome]) -> SuiteVerdict:
    """A regression anywhere; else ``incomplete`` if an eval set has no evaluated run;
    else an improvement anywhere; else no significant change."""
    statuses = {outcome.status for outcome in outcomes}
    if "regression" in statuses:
        return "regression"
    if "failed" in statuses:
        return "incomplete"
    if "improvement" in statuses:
        return "improvement"
    return "no significant change"


def outcome_of_published_run(
    *,
    index: int,
    agent: str,
    entry: RunEntry,
    eval_set_id: str,
    eval_set_name: str,
    record: RunComparison | None,
    baseline: str,
    report_url: str | None,
    flow_run: str | None,
    flow_run_state: str | None,
) -> EvalSetOutcome:
    """The outcome of an eval set whose run was published as ``entry``, with its
    comparison record (None: the run was not compared)."""
    outcome = EvalSetOutcome(
        index=index,
        eval_set_id=eval_set_id,
        eval_set_name=eval_set_name,
        agent=agent,
        status="not compared",
        flow_run=flow_run,
        flow_run_state=flow_run_state,
        run_id=entry.run_id,
        report_url=report_url,
        pass_rate=entry.pass_rate,
        ci_low=entry.ci_low,
        ci_high=entry.ci_high,
        trials=entry.trials,
        baseline=record.baseline if record is not None else baseline,
    )
    if record is None:  # the suite always asks for a baseline: its record is missing
        outcome.problem = "the run was not compared with a baseline (no comparison.json)"
        outcome.problem_kind = "unavailable"
        return outcome
    outcome.gate_failed = record.gate_failed
    comparison = record.comparison
    if comparison is None:
        problem = record.problem
        outcome.problem = problem.message if problem else "not compared"
        outcome.problem_kind = problem.kind if problem else None
        return outcome
    outcome.baseline_run_id = comparison.baseline.run_id
    outcome.overall_verdict = comparison.overall.verdict
    outcome.change = comparison.overall.change
    outcome.regressed_cases = [
        RegressedCase(
            case_id=case.case_id,
            baseline=f"{case.baseline.passed}/{case.baseline.runs}" if case.baseline else None,
            candidate=f"{case.candidate.passed}/{case.candidate.runs}" if case.candidate else None,
            change=case.change,
            p_adjusted=case.p_adjusted,
        )
        for case in comparison.cases
        if case.verdict == "regression"
    ]
    outcome.improved_cases = [c.case_id for c in comparison.cases if c.verdict == "improvement"]
    outcome.efficiency = efficiency_findings(comparison)
    if comparison.regressed:
        outcome.status = "regression"
    elif comparison.overall.verdict == "improvement" or outcome.improved_cases:
        outcome.status = "improvement"
    else:
        outcome.status = "no significant change"
    return outcome


def failed_outcome(
    *,
    index: int,
    agent: str,
    eval_set_id: str,
    eval_set_name: str,
    baseline: str,
    problem: str,
    flow_run: str | None,
    flow_run_state: str | None,
) -> EvalSetOutcome:
    """The outcome of an eval set with no evaluated run to show: ``problem`` says why
    (the evaluate run failed, or published nothing the suite could find)."""
    return EvalSetOutcome(
        index=index,
        eval_set_id=eval_set_id,
        eval_set_name=eval_set_name,
        agent=agent,
        status="failed",
        flow_run=flow_run,
        flow_run_state=flow_run_state,
        baseline=baseline,
        problem=problem,
    )
