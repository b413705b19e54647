"""The console scorecard: one line per case, ``name  passed/runs  label``,
then ``overall: P/T``. Boring on purpose: the numbers are the point."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentflow_eval.models.results import CaseResult, RunResult, TrialResult
from agentflow_eval.report.case_trials import CaseTrials, TrialsInMemory

if TYPE_CHECKING:
    from agentflow_eval.compare.models import RunComparison

__all__ = ["defaulted_criteria_line", "format_scorecard"]


def _pct(value: float) -> str:
    return f"{value * 100:.0f}%"


def format_scorecard(
    run: RunResult,
    *,
    verbose: bool = False,
    simulated_label: str = "",
    trials: CaseTrials | None = None,
    comparison: RunComparison | None = None,
) -> str:
    """The scorecard as text. ``verbose`` adds criterion means and why trials failed,
    reading each case's trials from ``trials`` (default: ``run.trials``; a run folder's
    ``JudgedFileTrials`` holds one case at a time). ``comparison``: the run against its
    baseline, as a short block at the end."""
    if verbose and trials is None:
        trials = TrialsInMemory(run.trials)
    lines = [f"agentflow-eval: {run.eval_set_id} · {run.runs_per_case} runs each"]
    model = f" · model {run.agent_model}" if run.agent_model else ""
    lines.append(f"agent: {run.agent}{model}")
    if run.simulated:
        lines.append(simulated_label or "NOTE: simulated offline demo model, not a real LLM")
    defaults = defaulted_criteria_line(run)
    if defaults:
        lines.append(defaults)
    width = max((len(c.case_id) for c in run.cases), default=0)
    for case in run.cases:
        lines.append(f"  {case.case_id:<{width}}  {case.passed}/{case.runs}  {case.label}")
        if trials is not None and verbose:
            lines.extend(_case_details(case, trials.trials_of(case.case_id)))
    totals = run.totals
    lines.append(
        f"overall: {totals.passed}/{totals.trials}"
        f"  ({_pct(totals.pass_rate)}, 95% CI {_pct(totals.ci_low)}–{_pct(totals.ci_high)})"
    )
    extras = []
    if totals.errored:
        extras.append(f"{totals.errored} errored")
    if totals.not_evaluated:
        extras.append(f"{totals.not_evaluated} not evaluated")
    if totals.judge_calls or totals.judge_cache_hits:
        extras.append(f"judge calls {totals.judge_calls}, cache hits {totals.judge_cache_hits}")
    if extras:
        lines.append("         " + "; ".join(extras))
    if comparison is not None:
        from agentflow_eval.compare.brief import comparison_lines

        lines.extend(comparison_lines(comparison))
    return "\n".join(lines)


def _case_details(case: CaseResult, trials: list[TrialResult]) -> list[str]:
    out = []
    for crit in case.criteria:
        mean = "n/a" if crit.mean_score is None else f"{crit.mean_score:.2f}"
        extra = f", {crit.not_evaluated} not evaluated" if crit.not_evaluated else ""
        out.append(
            f"      {crit.label or crit.criterion}: mean {mean}, "
            f"{crit.passed} passed, {crit.failed} failed{extra}"
        )
    for result in trials:
        if result.passed:
            continue
        trial = result.trial
        if trial.error is not None:
            why = f"{trial.error.kind}: {trial.error.message}"
        else:
            bad = [c for c in result.criteria if c.status in ("failed", "not_evaluated")]
            why = "; ".join(
                f"{c.label or c.criterion} "
                + (f"{c.score:.2f}" if c.score is not None else f"not evaluated ({c.reason})")
                for c in bad
            )
        out.append(f"      trial {trial.trial_index}: {result.status}: {why}")
    return out


def defaulted_criteria_line(run: RunResult) -> str | None:
    """Which criteria judged the run because no config was given (ADK's defaults), and on
    how many cases (a case with expectations of its own gets a default only where it gives
    the reference); ``None`` when every criterion was asked for."""
    criteria = run.config.get("criteria") or {}
    names = [
        name
        for name, options in criteria.items()
        if isinstance(options, dict) and options.get("defaulted")
    ]
    if not names:
        return None
    total = len(run.cases)
    applied = [
        f"{name} on {sum(any(c.criterion == name for c in case.criteria) for case in run.cases)}"
        f"/{total} cases"
        for name in names
    ]
    return "default criteria (no config given): " + ", ".join(applied)
