"""Two agent versions' production traces compared: did the newer one drop?

Each version's traces were scored in a run of their own. Production traces are not the
same cases twice: each trace is a case of its own (unless a case attribute names them),
so the two runs share no case the comparison could pair. The traces are pooled instead,
each stratum's apart (the strata the batch sampled by, the version aside; all of a
version's traces when there are none): a stratum's traces of one version are a case of
the pooled run, their passes and trials summed. The two pooled runs are then compared as
any two runs are (:func:`agentflow_eval.compare.comparison.compare_runs`, made apart): an
exact test (Boschloo's, Fisher's for large strata) per stratum, Holm-corrected across
the strata, the overall change by stratum, the power to see a drop, and the efficiency
figures (cost, tokens, latency, tool calls) of the traces compared by the same tests. A
drop is called only when a test says so, and is what ``agentflow.eval.regressed`` is
emitted for. Traces whose cases a case attribute named are compared case by case, as
any two runs.

A side given without its recording (a window scored by an earlier batch, whose recording
may be kept on another machine) has no strata to pool by: then both sides' traces are
pooled whole, as ``all traces``, so the two sides' cases still match.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentflow_eval.compare.comparison import compare_runs
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.files.jsonl import iter_raw
from agentflow_eval.models.results import CaseResult, RunResult
from agentflow_eval.run.efficiency import case_efficiency
from agentflow_eval.run.stats import wilson_interval
from agentflow_eval.traces.recording import TRACES_FILE

__all__ = ["ALL_TRACES", "compare_versions", "pooled_by_stratum"]

ALL_TRACES = "all traces"
"""The pooled case of a version's traces when the batch sampled no stratum."""


def _stratum_label(stratum: Mapping[str, str]) -> str:
    return ", ".join(f"{name}={value}" for name, value in stratum.items()) or ALL_TRACES


def pooled_by_stratum(run: RunResult, recording: Path | None) -> RunResult:
    """``run`` (a version's traces, each its own case) with its cases pooled by the
    stratum each trace was sampled in (see the module); without its ``recording``, all
    of them in one."""
    group_of: dict[str, str] = {}
    for raw in iter_raw(recording / TRACES_FILE) if recording is not None else ():
        stratum = raw.get("stratum")
        group_of[str(raw["case_id"])] = _stratum_label(stratum if isinstance(stratum, dict) else {})
    pools: dict[str, list[CaseResult]] = {}
    for case in run.cases:
        pools.setdefault(group_of.get(case.case_id, ALL_TRACES), []).append(case)
    return run.model_copy(
        update={"cases": [_pooled(label, cases) for label, cases in pools.items()], "trials": []}
    )


def _pooled(label: str, cases: list[CaseResult]) -> CaseResult:
    runs = sum(case.runs for case in cases)
    passed = sum(case.passed for case in cases)
    infrastructure = sum(case.infrastructure_errors for case in cases)
    not_evaluated = sum(case.not_evaluated for case in cases)
    rated = runs - infrastructure - not_evaluated
    low, high = wilson_interval(passed, rated)
    figures = [
        figure.model_copy(update={"trial_index": number})
        for number, figure in enumerate(f for case in cases for f in case.trial_figures)
    ]
    return CaseResult(
        case_id=label,
        label=label,
        runs=runs,
        passed=passed,
        failed=sum(case.failed for case in cases),
        errored=sum(case.errored for case in cases),
        infrastructure_errors=infrastructure,
        not_evaluated=not_evaluated,
        rated_runs=rated,
        pass_rate=passed / rated if rated else 0.0,
        ci_low=low,
        ci_high=high,
        trial_figures=figures,
        efficiency=case_efficiency(figures),
    )


def compare_versions(
    baseline: tuple[str, RunResult, Path | None],
    candidate: tuple[str, RunResult, Path | None],
    *,
    alpha: float,
    by_case: bool,
    baseline_name: str | None = None,
) -> RunComparison:
    """The candidate version's traces against the baseline version's (each given as its
    version, its run's results and its recording's folder, None when it is not at hand:
    see the module); ``baseline_name`` names the baseline (default ``agent version X``)."""
    (old, old_run, old_recording), (new, new_run, new_recording) = baseline, candidate
    if not by_case:
        both = old_recording is not None and new_recording is not None
        old_run = pooled_by_stratum(old_run, old_recording if both else None)
        new_run = pooled_by_stratum(new_run, new_recording if both else None)
    comparison = compare_runs(
        old_run,
        new_run,
        alpha=alpha,
        pairing="apart",
        baseline_source=f"agent version {old}'s production traces",
        candidate_source=f"agent version {new}'s production traces",
    )
    return RunComparison(baseline=baseline_name or f"agent version {old}", comparison=comparison)
