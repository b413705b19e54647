"""Aggregation: judged trials folded into case and run summaries — pass rates with their
intervals, pass@k and pass^k, each criterion's mean — and the run's ``RunResult``.

Trials that errored for infrastructure reasons (a provider fault that outlasted its
retries, ``TrialError.kind == "infrastructure"``) are not the agent's failures: they are
counted apart and left out of pass rates, unless the run counts them
(``count_infrastructure_errors``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from agentflow_eval.criteria.registry import spec_of
from agentflow_eval.demo.names import is_demo_model
from agentflow_eval.files.case_trials import JudgedFileTrials
from agentflow_eval.files.jsonl import iter_lines_with_offsets, validate_record
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalCase, EvalSet
from agentflow_eval.models.results import (
    CaseResult,
    CriterionResult,
    CriterionSummary,
    ModelCallEvent,
    RunResult,
    RunTotals,
    Trial,
    TrialFigures,
    TrialResult,
    Usage,
)
from agentflow_eval.run.efficiency import case_efficiency, value_spread
from agentflow_eval.run.expected import expected_turns
from agentflow_eval.run.judge_noise import JudgeNoise
from agentflow_eval.run.pass_value import pass_value
from agentflow_eval.run.plan import RunMeta
from agentflow_eval.run.resumable import TrialKey
from agentflow_eval.run.stats import pass_at_k, pass_hat_k, wilson_interval

__all__ = ["aggregate", "aggregate_judged", "case_label"]


@dataclass
class _CriterionTally:
    label: str = ""
    threshold: float | None = None
    scores: list[float] = field(default_factory=list)
    passed: int = 0
    failed: int = 0
    not_evaluated: int = 0
    skipped: int = 0
    noise: JudgeNoise = field(default_factory=JudgeNoise)

    def add(self, result: CriterionResult) -> None:
        self.label = self.label or result.label
        self.noise.add(result)
        self.threshold = result.threshold
        if result.score is not None and result.status in ("passed", "failed"):
            self.scores.append(result.score)
        if result.status == "passed":
            self.passed += 1
        elif result.status == "failed":
            self.failed += 1
        elif result.status == "not_evaluated":
            self.not_evaluated += 1
        else:
            self.skipped += 1

    def merge(self, other: _CriterionTally) -> None:
        self.label = self.label or other.label
        self.threshold = other.threshold if other.threshold is not None else self.threshold
        self.scores.extend(other.scores)
        self.passed += other.passed
        self.failed += other.failed
        self.not_evaluated += other.not_evaluated
        self.skipped += other.skipped
        self.noise.merge(other.noise)

    def summary(self, name: str) -> CriterionSummary:
        return CriterionSummary(
            criterion=name,
            label=self.label,
            threshold=self.threshold,
            mean_score=sum(self.scores) / len(self.scores) if self.scores else None,
            passed=self.passed,
            failed=self.failed,
            not_evaluated=self.not_evaluated,
            skipped=self.skipped,
            judge_sampled_trials=self.noise.trials,
            judge_split_trials=self.noise.split_trials,
            judge_flip_rate=_rounded(self.noise.flip_rate),
            judge_variance_share=_rounded(self.noise.variance_share),
        )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@dataclass
class _CaseTally:
    statuses: dict[str, int] = field(default_factory=dict)
    criteria: dict[str, _CriterionTally] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    figures: list[TrialFigures] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    judge_usage: Usage = field(default_factory=Usage)
    judge_cache_hits: int = 0
    infrastructure_errors: int = 0
    nothing_judged: int = 0
    """Trials not evaluated because no criterion judged them (all skipped, or none)."""
    nothing_judged_reason: str | None = None
    simulated: bool = False
    """Whether the demo model answered some model call of these trials (whatever name the
    agent's client asked for: the reply names the demo model)."""

    def add(self, result: TrialResult) -> None:
        self.simulated = self.simulated or _answered_by_demo(result.trial)
        self.statuses[result.status] = self.statuses.get(result.status, 0) + 1
        if result.status == "not_evaluated" and all(c.status == "skipped" for c in result.criteria):
            self.nothing_judged += 1
            if self.nothing_judged_reason is None:
                self.nothing_judged_reason = _skip_reasons(result.criteria)
        error = result.trial.error
        self.infrastructure_errors += error is not None and error.kind == "infrastructure"
        self.latencies.append(result.trial.duration_ms)
        self.figures.append(TrialFigures.of(result.trial, pass_value(result)))
        self.usage.add(result.trial.usage)
        for criterion in result.criteria:
            key = _criterion_key(criterion)
            self.criteria.setdefault(key, _CriterionTally()).add(criterion)
            if criterion.usage is not None:
                self.judge_usage.add(criterion.usage)
            self.judge_cache_hits += int(criterion.details.get("cached_samples", 0) or 0)

    def count(self, status: str) -> int:
        return self.statuses.get(status, 0)

    def counted_runs(self, count_infrastructure_errors: bool) -> int:
        """The trials a pass rate is over: those with a verdict on the agent. Left out:
        the trials the provider failed (unless the run counts those too), and those no
        criterion could give a verdict on (a judge that never answered, every criterion
        skipped) — neither says anything about the agent."""
        runs = sum(self.statuses.values()) - self.count("not_evaluated")
        return runs if count_infrastructure_errors else runs - self.infrastructure_errors


def _answered_by_demo(trial: Trial) -> bool:
    return any(
        isinstance(event, ModelCallEvent) and is_demo_model(event.model)
        for turn in trial.turns
        for event in turn.events
    )


def _skip_reasons(criteria: list[CriterionResult]) -> str:
    if not criteria:
        return "no criterion applies to it"
    return "; ".join(f"{c.criterion}: {c.reason or 'skipped'}" for c in criteria)


def _nothing_judged_note(cases: dict[str, _CaseTally]) -> str | None:
    """The run's note about trials no criterion judged, naming the first such case and
    why: they are "not evaluated", never passes, and the results say so."""
    hit = [(case_id, t) for case_id, t in cases.items() if t.nothing_judged]
    if not hit:
        return None
    trials = sum(t.nothing_judged for _, t in hit)
    first_id, first = hit[0]
    more = f" (and {len(hit) - 1} more case(s))" if len(hit) > 1 else ""
    return (
        f"{trials} trial(s) not evaluated: every criterion was skipped, so nothing judged "
        f"them. Case {first_id!r}{more}: {first.nothing_judged_reason}"
    )


def _criterion_key(result: CriterionResult) -> str:
    """Criteria a case may name several times with different targets (the expectations
    calls_tool and final_contains, as they declare): key them by label too."""
    spec = spec_of(result.criterion)
    if spec is not None and spec.repeatable:
        return f"{result.criterion}: {result.label}"
    return result.criterion


def case_label(case: EvalCase, config: EvalConfig, tally: _CaseTally | None) -> str:
    """The scorecard label: what the case is judged on."""
    if tally is not None and tally.criteria:
        return ", ".join(t.label or name for name, t in tally.criteria.items())
    labels = list(config.criteria) + [e.label for e in case.expectations]
    return ", ".join(labels)


def _k_values(runs: int) -> list[int]:
    return sorted({k for k in (1, 3, 5, runs) if 1 <= k <= runs})


class _Admission:
    """Which judged trials a run counts: those of cases in the eval set, each (case,
    trial) once. A second line for a key (two processes resuming the same folder at once,
    say; a single resume never writes one, see :func:`completed_keys`) is left out, so the
    first line written for a trial is the one every report shows."""

    def __init__(self, eval_set: EvalSet) -> None:
        self._known = {case.eval_id for case in eval_set.eval_cases}
        self._seen: set[TrialKey] = set()

    def admits(self, result: TrialResult) -> bool:
        key = result.trial.key
        if key[0] not in self._known or key in self._seen:
            return False
        self._seen.add(key)
        return True


def aggregate(
    eval_set: EvalSet,
    config: EvalConfig,
    judged: Iterable[TrialResult],
    meta: RunMeta,
    *,
    finished_at: datetime | None = None,
) -> RunResult:
    """Fold judged trials into case and run summaries, keeping the trials (a run folder's
    ``judged.jsonl`` goes through :func:`aggregate_judged`, which keeps none). Trials of
    cases not in ``eval_set`` and repeated (case, trial) keys are left out."""
    admission = _Admission(eval_set)
    tallies = _new_tallies(eval_set)
    kept: list[TrialResult] = []
    for result in judged:
        if not admission.admits(result):
            continue
        tallies[result.trial.case_id].add(result)
        kept.append(result)
    kept.sort(key=lambda r: (r.trial.case_id, r.trial.trial_index))
    return _summarise(eval_set, config, tallies, kept, meta, finished_at)


def aggregate_judged(
    eval_set: EvalSet,
    config: EvalConfig,
    judged_path: Path,
    meta: RunMeta,
    *,
    on_trial: Callable[[TrialResult], None] | None = None,
    finished_at: datetime | None = None,
) -> tuple[RunResult, JudgedFileTrials]:
    """:func:`aggregate` over ``judged_path`` without keeping the trials: the run's
    summary (``trials`` empty) and an index that reads any case's trials back from the
    file. Memory grows with the number of cases, not trials; ``on_trial`` sees every
    counted trial once, in file order (the report stage folds chart data with it)."""
    admission = _Admission(eval_set)
    tallies = _new_tallies(eval_set)
    index = JudgedFileTrials(judged_path)
    for offset, line in iter_lines_with_offsets(judged_path):
        result = validate_record(line, TrialResult, judged_path, f"byte {offset}")
        if not admission.admits(result):
            continue
        tallies[result.trial.case_id].add(result)
        index.add(result.trial.case_id, result.trial.trial_index, offset)
        if on_trial is not None:
            on_trial(result)
    return _summarise(eval_set, config, tallies, [], meta, finished_at), index


def _new_tallies(eval_set: EvalSet) -> dict[str, _CaseTally]:
    return {case.eval_id: _CaseTally() for case in eval_set.eval_cases}


def _summarise(
    eval_set: EvalSet,
    config: EvalConfig,
    tallies: dict[str, _CaseTally],
    kept: list[TrialResult],
    meta: RunMeta,
    finished_at: datetime | None,
) -> RunResult:
    """The run's results from its per-case tallies (and the trials kept, if any)."""
    cases: list[CaseResult] = []
    run_criteria: dict[str, _CriterionTally] = {}
    totals = RunTotals(cases=len(eval_set.eval_cases))
    counted_trials = 0
    for case in eval_set.eval_cases:
        tally = tallies[case.eval_id]
        runs = sum(tally.statuses.values())
        counted = tally.counted_runs(meta.count_infrastructure_errors)
        passed = tally.count("passed")
        low, high = wilson_interval(passed, counted)
        ks = _k_values(counted) if counted else []
        cases.append(
            CaseResult(
                case_id=case.eval_id,
                label=case_label(case, config, tally),
                runs=runs,
                passed=passed,
                failed=tally.count("failed"),
                errored=tally.count("errored"),
                infrastructure_errors=tally.infrastructure_errors,
                not_evaluated=tally.count("not_evaluated"),
                rated_runs=counted,
                pass_rate=passed / counted if counted else 0.0,
                ci_low=low,
                ci_high=high,
                pass_at_k={str(k): pass_at_k(counted, passed, k) for k in ks},
                pass_hat_k={str(k): pass_hat_k(counted, passed, k) for k in ks},
                criteria=[t.summary(name) for name, t in tally.criteria.items()],
                mean_latency_ms=sum(tally.latencies) / len(tally.latencies)
                if tally.latencies
                else 0.0,
                usage=tally.usage,
                judge_usage=tally.judge_usage,
                expected=expected_turns(case),
                next_step_only=case.next_step_only,
                trial_figures=sorted(tally.figures, key=lambda f: f.trial_index),
                efficiency=case_efficiency(tally.figures),
            )
        )
        for name, crit in tally.criteria.items():
            run_criteria.setdefault(name, _CriterionTally()).merge(crit)
        totals.trials += runs
        counted_trials += counted
        totals.passed += passed
        totals.infrastructure_errors += tally.infrastructure_errors
        totals.failed += tally.count("failed")
        totals.errored += tally.count("errored")
        totals.not_evaluated += tally.count("not_evaluated")
        totals.usage.add(tally.usage)
        totals.judge_usage.add(tally.judge_usage)
        totals.judge_cache_hits += tally.judge_cache_hits
    totals.rated_trials = counted_trials
    totals.pass_rate = totals.passed / counted_trials if counted_trials else 0.0
    totals.ci_low, totals.ci_high = wilson_interval(totals.passed, counted_trials)
    totals.judge_calls = totals.judge_usage.calls
    run_latencies = [
        latency for case in eval_set.eval_cases for latency in tallies[case.eval_id].latencies
    ]
    totals.trial_latency_ms = value_spread(run_latencies) if run_latencies else None

    finished = finished_at or datetime.now(UTC)
    # measured on the monotonic clock, unless the caller names the finish (a summary
    # reproduced for a known moment): then the span to it, never below zero
    duration_s = (
        meta.elapsed_s()
        if finished_at is None
        else max(0.0, (finished_at - meta.started_at).total_seconds())
    )
    return RunResult(
        run_id=meta.run_id,
        eval_set_id=eval_set.eval_set_id,
        eval_set_name=eval_set.name,
        agent=meta.agent,
        agent_spec=meta.agent_spec,
        track=meta.track,
        agent_version=meta.agent_version,
        git_sha=meta.git_sha,
        labels=dict(meta.labels),
        agent_model=meta.agent_model,
        judge_model=meta.judge_model,
        simulated=meta.simulated or any(tally.simulated for tally in tallies.values()),
        counts_infrastructure_errors=meta.count_infrastructure_errors,
        runs_per_case=meta.runs_per_case,
        started_at=meta.started_at,
        finished_at=finished,
        duration_s=duration_s,
        config=config.model_dump(mode="json", exclude_defaults=True),
        totals=totals,
        criteria=[t.summary(name) for name, t in run_criteria.items()],
        cases=cases,
        trials=kept,
        notes=[*meta.notes, *filter(None, [_nothing_judged_note(tallies)])],
        rejudged_from=meta.rejudged_from,
        paired_with=meta.paired_with,
    )
