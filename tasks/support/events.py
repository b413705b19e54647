"""Prefect events a run emits, for automations (notify, page, start the next step).

- ``agentflow.eval.completed``: every run that produced results, with its pass rate,
  counts, the report's URL (or local path), the agent and its version.
- ``agentflow.eval.publish-failed``: the report could not be published; the payload says
  where it was going, why it failed and where the run folder is kept.
- ``agentflow.eval.regressed``: the run's comparison with its baseline found a
  significant regression (overall or in some case); the payload's ``verdict`` is
  ``regression``, ``overall_verdict`` says whether the overall change alone was
  significant, and it names the regressed cases with their counts, changes and p-values,
  the significant increases of cost, tokens, latency or tool calls (``efficiency``: each
  with ``beyond_tolerance``, true for those that made the run regress), the baseline run
  and the report.
- ``agentflow.eval.judge-untrustworthy``: some judge agreed with the people who labelled
  its verdicts less than ``min_judge_agreement`` asked; the payload names each with its
  agreement, sensitivity, specificity and κ (intervals too), its pass rate as judged and
  corrected, and the report. (``completed`` carries every labelled judge's figures and
  the untrustworthy ones' names too.)
- ``agentflow.eval.baseline-unavailable``: the run was to be compared with a baseline and
  was not; ``payload.kind`` is ``no-earlier-run`` (the first run of a schedule) or
  ``unavailable`` (the baseline could not be read: nobody can say whether it regressed).

The event's resource is the eval set (``agentflow.eval-set.<id>``); the agent
(``agentflow.agent.<key>``) is a related resource, and Prefect adds the flow run, flow and
deployment the event was emitted from.

A regression suite (the ``regression`` flow) emits its own, with the suite as the
resource (``agentflow.eval-suite.<suite>``) and its eval sets as related resources:

- ``agentflow.eval.suite-completed``: every suite run, with its verdict and each eval
  set's status, pass rate and report URL, and the summary's URL;
- ``agentflow.eval.suite-regressed``: some eval set regressed; the payload names them
  with their regressed cases, changes and report URLs;
- ``agentflow.eval.suite-incomplete``: some eval set has no evaluated run (its evaluate
  run failed, crashed, was cancelled at ``eval_timeout_minutes``, or published nothing);
  the payload names them, each with the problem that says why;
- ``agentflow.eval.suite-publish-failed``: the suite's summary could not be published.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect.events import emit_event

from agentflow_eval.compare.efficiency import efficiency_findings
from agentflow_eval.compare.models import CaseCounts, RunComparison
from agentflow_eval.compare.suite import EvalSetOutcome, SuiteSummary
from agentflow_eval.models.agreement import Estimate, JudgeAgreement
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.agreement_text import untrustworthy_judges
from agentflow_eval.tasks.support.artifacts import ArtifactScope

__all__ = [
    "BASELINE_UNAVAILABLE",
    "COMPLETED",
    "JUDGE_UNTRUSTWORTHY",
    "PUBLISH_FAILED",
    "REGRESSED",
    "SUITE_COMPLETED",
    "SUITE_INCOMPLETE",
    "SUITE_PUBLISH_FAILED",
    "SUITE_REGRESSED",
    "emit_comparison",
    "emit_completed",
    "emit_judge_untrustworthy",
    "emit_publish_failed",
    "emit_suite",
    "regressed_payload",
]

COMPLETED = "agentflow.eval.completed"
PUBLISH_FAILED = "agentflow.eval.publish-failed"
REGRESSED = "agentflow.eval.regressed"
BASELINE_UNAVAILABLE = "agentflow.eval.baseline-unavailable"
JUDGE_UNTRUSTWORTHY = "agentflow.eval.judge-untrustworthy"
SUITE_COMPLETED = "agentflow.eval.suite-completed"
SUITE_REGRESSED = "agentflow.eval.suite-regressed"
SUITE_INCOMPLETE = "agentflow.eval.suite-incomplete"
SUITE_PUBLISH_FAILED = "agentflow.eval.suite-publish-failed"


def _resources(run: RunResult, scope: ArtifactScope) -> tuple[dict[str, str], list[dict[str, str]]]:
    resource = {
        "prefect.resource.id": f"agentflow.eval-set.{run.eval_set_id}",
        "prefect.resource.name": run.eval_set_name or run.eval_set_id,
        "agentflow.run.id": run.run_id,
    }
    related = [
        {
            "prefect.resource.id": f"agentflow.agent.{scope.agent or run.agent}",
            "prefect.resource.role": "agent",
            "prefect.resource.name": run.agent,
        }
    ]
    return resource, related


def _run_identity(run: RunResult) -> dict[str, Any]:
    """What every run event's payload says about the run and the agent it tested."""
    return {
        "run_id": run.run_id,
        "eval_set_id": run.eval_set_id,
        "agent": run.agent,
        "agent_version": run.agent_version,
        "git_sha": run.git_sha,
        "labels": run.labels,
    }


def completed_payload(
    run: RunResult, report_url: str | None, run_dir: Path, published: bool | None
) -> dict[str, Any]:
    totals = run.totals
    return {
        **_run_identity(run),
        "pass_rate": totals.pass_rate,
        "ci_low": totals.ci_low,
        "ci_high": totals.ci_high,
        "trials": totals.trials,
        "passed": totals.passed,
        "failed": totals.failed,
        "errored": totals.errored,
        "simulated": run.simulated,
        "report_url": report_url,
        "run_dir": str(run_dir),
        "published": published,
        # what the run spent, the agent's and the judges' apart (cost as the providers
        # reported it: zero where they did not)
        "usage": totals.usage.model_dump(mode="json"),
        "judge_usage": totals.judge_usage.model_dump(mode="json"),
        "cost_usd": totals.usage.cost_usd + totals.judge_usage.cost_usd,
        "track": run.track,
        # each judge people checked: how far they agree with it
        "judge_agreement": [_agreement(a) for a in run.judge_agreement],
        "untrustworthy_judges": [a.criterion for a in untrustworthy_judges(run)],
    }


def _agreement(agreement: JudgeAgreement) -> dict[str, Any]:
    def figure(estimate: Estimate | None) -> dict[str, float] | None:
        return None if estimate is None else estimate.model_dump(mode="json")

    return {
        "criterion": agreement.criterion,
        "labelled_trials": agreement.labelled_trials,
        "verdicts": agreement.verdicts,
        "agreement": figure(agreement.agreement),
        "sensitivity": figure(agreement.sensitivity),
        "specificity": figure(agreement.specificity),
        "kappa": figure(agreement.kappa),
        "raw_pass_rate": figure(agreement.raw_pass_rate),
        "corrected_pass_rate": figure(agreement.corrected_pass_rate),
        "min_agreement": agreement.min_agreement,
        "untrustworthy": agreement.untrustworthy,
    }


def emit_judge_untrustworthy(
    run: RunResult, *, report_url: str | None, run_dir: Path, scope: ArtifactScope
) -> bool:
    """Emit ``agentflow.eval.judge-untrustworthy`` when some judge fell below the
    agreement the run asked; whether it did."""
    judges = untrustworthy_judges(run)
    if not judges:
        return False
    resource, related = _resources(run, scope)
    emit_event(
        JUDGE_UNTRUSTWORTHY,
        resource=resource,
        related=related,
        payload={
            **_run_identity(run),
            "judges": [_agreement(a) for a in judges],
            "report_url": report_url,
            "run_dir": str(run_dir),
        },
    )
    return True


def emit_completed(
    run: RunResult,
    *,
    report_url: str | None,
    run_dir: Path,
    published: bool | None,
    scope: ArtifactScope,
) -> None:
    """Emit ``agentflow.eval.completed``. ``published`` is None when nothing was to be
    published."""
    resource, related = _resources(run, scope)
    emit_event(
        COMPLETED,
        resource=resource,
        related=related,
        payload=completed_payload(run, report_url, run_dir, published),
    )


def emit_publish_failed(
    run: RunResult, *, target: str, message: str, run_dir: Path, scope: ArtifactScope
) -> None:
    """Emit ``agentflow.eval.publish-failed``."""
    resource, related = _resources(run, scope)
    emit_event(
        PUBLISH_FAILED,
        resource=resource,
        related=related,
        payload={
            "run_id": run.run_id,
            "eval_set_id": run.eval_set_id,
            "agent_version": run.agent_version,
            "target": target,
            "message": message,
            "run_dir": str(run_dir),
        },
    )


def regressed_payload(
    run: RunResult, record: RunComparison, report_url: str | None, run_dir: Path
) -> dict[str, Any]:
    """What ``agentflow.eval.regressed`` carries: the regressed cases and the change."""
    comparison = record.comparison
    assert comparison is not None
    overall = comparison.overall

    def counts(side: CaseCounts | None) -> str | None:
        return None if side is None else f"{side.passed}/{side.runs}"

    return {
        **_run_identity(run),
        "baseline": record.baseline,
        "baseline_run_id": comparison.baseline.run_id,
        # the event's verdict is the run's (it regressed, overall or in a case); the
        # overall change may alone be too small to tell from noise
        "verdict": "regression",
        "overall_verdict": overall.verdict,
        "pass_rate_before": overall.baseline_pass_rate,
        "pass_rate_after": overall.candidate_pass_rate,
        "change": overall.change,
        "ci_low": overall.ci_low,
        "ci_high": overall.ci_high,
        "regressed_cases": [
            {
                "case_id": case.case_id,
                "baseline": counts(case.baseline),
                "candidate": counts(case.candidate),
                "change": case.change,
                "p_adjusted": case.p_adjusted,
            }
            for case in comparison.cases
            if case.verdict == "regression"
        ],
        # a paired run's cases as their pairs decided them (none for runs made apart)
        "paired": None
        if comparison.sequential is None
        else {
            "trials": comparison.sequential.trials,
            "fixed_design_trials": comparison.sequential.fixed_design_trials,
            "counts": comparison.sequential.counts,
            "cases": [
                case.model_dump(mode="json")
                for case in comparison.sequential.cases
                if case.status != "cleared"
            ],
        },
        # significant increases of cost, tokens, latency or tool calls; a regression
        # (what made the run regress, with no regressed case) when beyond_tolerance
        "efficiency": [
            finding.model_dump(mode="json") for finding in efficiency_findings(comparison)
        ],
        "fail_on_regression": record.fail_on_regression,
        "report_url": report_url,
        "run_dir": str(run_dir),
    }


def emit_comparison(
    run: RunResult,
    record: RunComparison,
    *,
    report_url: str | None,
    run_dir: Path,
    scope: ArtifactScope,
) -> str | None:
    """Emit ``agentflow.eval.regressed`` for a significant regression, or
    ``agentflow.eval.baseline-unavailable`` when there was no comparison; nothing when
    the run was compared and did not regress. Returns the event's name, if any."""
    resource, related = _resources(run, scope)
    if record.regressed:
        emit_event(
            REGRESSED,
            resource=resource,
            related=related,
            payload=regressed_payload(run, record, report_url, run_dir),
        )
        return REGRESSED
    if record.problem is not None:
        emit_event(
            BASELINE_UNAVAILABLE,
            resource=resource,
            related=related,
            payload={
                "run_id": run.run_id,
                "eval_set_id": run.eval_set_id,
                "agent_version": run.agent_version,
                "baseline": record.baseline,
                "kind": record.problem.kind,
                "message": record.problem.message,
                "fail_on_regression": record.fail_on_regression,
                "report_url": report_url,
                "run_dir": str(run_dir),
            },
        )
        return BASELINE_UNAVAILABLE
    return None


def _suite_resources(summary: SuiteSummary) -> tuple[dict[str, str], list[dict[str, str]]]:
    resource = {
        "prefect.resource.id": f"agentflow.eval-suite.{summary.suite}",
        "prefect.resource.name": summary.suite,
    }
    seen: dict[str, str] = {}
    for outcome in summary.evals:
        seen.setdefault(outcome.eval_set_id, outcome.eval_set_name or outcome.eval_set_id)
    related = [
        {
            "prefect.resource.id": f"agentflow.eval-set.{eval_set_id}",
            "prefect.resource.role": "eval-set",
            "prefect.resource.name": name,
        }
        for eval_set_id, name in seen.items()
    ]
    return resource, related


def _eval_set_payload(outcome: EvalSetOutcome) -> dict[str, Any]:
    return {
        "eval_set_id": outcome.eval_set_id,
        "agent": outcome.agent,
        "status": outcome.status,
        "run_id": outcome.run_id,
        "pass_rate": outcome.pass_rate,
        "change": outcome.change,
        "baseline_run_id": outcome.baseline_run_id,
        "regressed_cases": [case.model_dump(mode="json") for case in outcome.regressed_cases],
        "problem": outcome.problem,
        "flow_run": outcome.flow_run,
        "report_url": outcome.report_url,
    }


def emit_suite(
    summary: SuiteSummary,
    *,
    summary_url: str | None,
    publish_problem: str | None,
    local_dir: Path,
) -> list[str]:
    """Emit the suite's events: ``suite-completed`` always, ``suite-regressed`` when an
    eval set regressed, ``suite-incomplete`` when one has no evaluated run,
    ``suite-publish-failed`` when the summary was not published. Returns the names
    emitted."""
    resource, related = _suite_resources(summary)
    common = {
        "suite": summary.suite,
        "verdict": summary.verdict,
        "baseline": summary.baseline,
        "fail_on_regression": summary.fail_on_regression,
        "gate_failed": summary.gate_failed,
        "summary_url": summary_url,
        "summary_dir": str(local_dir),
    }
    emitted = [SUITE_COMPLETED]
    emit_event(
        SUITE_COMPLETED,
        resource=resource,
        related=related,
        payload={
            **common,
            "regressed": [o.eval_set_id for o in summary.regressed],
            "failed": [o.eval_set_id for o in summary.failed],
            "evals": [_eval_set_payload(o) for o in summary.evals],
        },
    )
    # the eval sets each event is about, related to it and listed in its payload
    for name, key, outcomes in (
        (SUITE_REGRESSED, "regressed", summary.regressed),
        (SUITE_INCOMPLETE, "incomplete", summary.failed),
    ):
        if outcomes:
            emitted.append(name)
            emit_event(
                name,
                resource=resource,
                related=[r for r in related if _names(r, outcomes)],
                payload={**common, key: [_eval_set_payload(o) for o in outcomes]},
            )
    if publish_problem is not None:
        emitted.append(SUITE_PUBLISH_FAILED)
        emit_event(
            SUITE_PUBLISH_FAILED,
            resource=resource,
            related=related,
            payload={**common, "target": summary.publish_to, "message": publish_problem},
        )
    return emitted


def _names(related: dict[str, str], outcomes: list[EvalSetOutcome]) -> bool:
    """Whether ``related`` is the eval set of one of ``outcomes``."""
    ids = {f"agentflow.eval-set.{o.eval_set_id}" for o in outcomes}
    return related["prefect.resource.id"] in ids
