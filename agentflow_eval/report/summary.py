"""A run's summary as one JSON document: what ``agentflow-eval run --json`` prints, for CI
logs and scripts. The totals and, per case, its counts, pass rate, interval and where it
stands (``failing``, ``flaky``, ``not_evaluated``, ``passing``); no trials (those are in
the run folder's ``results.json``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agentflow_eval.compare.models import RunComparison
from agentflow_eval.models.agreement import JudgeAgreement
from agentflow_eval.models.results import CaseEfficiency, RunResult, RunTotals
from agentflow_eval.report.agreement_text import untrustworthy_judges
from agentflow_eval.report.scorecard import CaseVerdict, case_verdict

__all__ = ["CaseSummary", "RunSummary", "run_summary"]


class CaseSummary(BaseModel):
    """One case of the run, without its trials."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    verdict: CaseVerdict = Field(
        description="failing: no trial passed; flaky: some did; passing: all did; "
        "not_evaluated: nothing judged the agent"
    )
    label: str = Field(description="what the case is judged on")
    runs: int
    rated_runs: int = Field(description="the trials pass_rate is over")
    passed: int
    failed: int
    errored: int
    infrastructure_errors: int
    not_evaluated: int
    pass_rate: float
    ci_low: float
    ci_high: float
    efficiency: CaseEfficiency | None = Field(
        default=None,
        description="what its trials took: medians and 90th percentiles with intervals",
    )


class RunSummary(BaseModel):
    """The run's summary: totals, cases, where its files are and where they went."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    eval_set_id: str
    agent: str
    agent_model: str | None = None
    judge_model: str | None = None
    simulated: bool = False
    runs_per_case: int
    duration_s: float
    run_dir: str | None = Field(default=None, description="the run folder")
    report: str | None = Field(default=None, description="report.html in the run folder")
    results: str | None = Field(default=None, description="results.json in the run folder")
    totals: RunTotals
    cases: list[CaseSummary]
    notes: list[str] = Field(default_factory=list)
    published: list[str] = Field(default_factory=list)
    report_url: str | None = None
    fail_under: float | None = Field(default=None, description="the gate the run was held to")
    below_fail_under: bool = Field(
        default=False, description="whether the pass rate fell below fail_under"
    )
    comparison: RunComparison | None = Field(
        default=None, description="the run against its baseline (run --baseline)"
    )
    judge_agreement: list[JudgeAgreement] = Field(
        default_factory=list,
        description="each judge against the people who labelled its verdicts",
    )
    untrustworthy_judges: list[str] = Field(
        default_factory=list,
        description="the criteria whose judge agreed with people less than "
        "min_judge_agreement asked",
    )


def run_summary(
    run: RunResult,
    run_dir: Path | None = None,
    *,
    notes: list[str] | None = None,
    published: list[str] | None = None,
    report_url: str | None = None,
    fail_under: float | None = None,
    comparison: RunComparison | None = None,
) -> RunSummary:
    """``run`` (its trials left out) with its folder's paths and publishing outcome."""
    return RunSummary(
        run_id=run.run_id,
        eval_set_id=run.eval_set_id,
        agent=run.agent,
        agent_model=run.agent_model,
        judge_model=run.judge_model,
        simulated=run.simulated,
        runs_per_case=run.runs_per_case,
        duration_s=run.duration_s,
        run_dir=str(run_dir) if run_dir else None,
        report=str(run_dir / "report.html") if run_dir else None,
        results=str(run_dir / "results.json") if run_dir else None,
        totals=run.totals,
        cases=[
            CaseSummary(
                case_id=case.case_id,
                verdict=case_verdict(case),
                label=case.label,
                runs=case.runs,
                rated_runs=case.rated_runs or case.runs,
                passed=case.passed,
                failed=case.failed,
                errored=case.errored,
                infrastructure_errors=case.infrastructure_errors,
                not_evaluated=case.not_evaluated,
                pass_rate=case.pass_rate,
                ci_low=case.ci_low,
                ci_high=case.ci_high,
                efficiency=case.efficiency,
            )
            for case in run.cases
        ],
        notes=[*run.notes, *(notes or [])],
        published=list(published or []),
        report_url=report_url,
        fail_under=fail_under,
        below_fail_under=fail_under is not None and run.totals.pass_rate < fail_under,
        comparison=comparison,
        judge_agreement=run.judge_agreement,
        untrustworthy_judges=[a.criterion for a in untrustworthy_judges(run)],
    )
