"""The evaluation pipeline's stages, as plain async functions (no Prefect):

    run_trials  (case × trial) → trials.jsonl      every trial, streamed as it finishes
    judge       trials.jsonl   → judged.jsonl      criterion results per trial
    aggregate   judged.jsonl   → RunResult         pass rates, intervals, means

The Prefect tasks in ``tasks/`` wrap these thinly; :func:`evaluate` chains them for
callers that want the whole pipeline in one call (pytest, scripts).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.criteria.base import Criterion, CriterionContext
from agentflow_eval.criteria.registry import build_criteria
from agentflow_eval.files.jsonl import JsonlWriter, iter_lines_with_offsets, iter_records
from agentflow_eval.files.results_json import write_results_json
from agentflow_eval.llm.client import model_clients
from agentflow_eval.llm.ratelimit import RateLimiter, current_rate_limiter, use_rate_limiter
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalCase, EvalSet
from agentflow_eval.models.results import (
    CaseResult,
    CriterionResult,
    CriterionSummary,
    RunResult,
    RunTotals,
    Trial,
    TrialResult,
    TrialStatus,
    Usage,
)
from agentflow_eval.report.case_trials import JudgedFileTrials
from agentflow_eval.report.expected import expected_turns
from agentflow_eval.run.stats import pass_at_k, pass_hat_k, wilson_interval
from agentflow_eval.run.trial import TrialSettings, UserTurnSource, run_trial

__all__ = [
    "DEFAULT_RUNS",
    "RunMeta",
    "RunPaths",
    "StageCounts",
    "aggregate",
    "aggregate_judged",
    "evaluate",
    "judge_trials",
    "new_run_id",
    "run_trials",
    "trial_status",
]

DEFAULT_RUNS = 5
"""Trials per case by default: a nondeterministic agent needs repetition (seed 003)."""

TrialKey = tuple[str, int]
T = TypeVar("T")


@dataclass(frozen=True)
class RunPaths:
    """Where one run's files live."""

    run_dir: Path

    @property
    def trials(self) -> Path:
        return self.run_dir / "trials.jsonl"

    @property
    def judged(self) -> Path:
        return self.run_dir / "judged.jsonl"

    @property
    def results(self) -> Path:
        return self.run_dir / "results.json"

    @property
    def meta(self) -> Path:
        return self.run_dir / "run.json"

    @classmethod
    def new(cls, output_root: Path, eval_set_id: str, run_id: str, started: datetime) -> RunPaths:
        from agentflow_eval.files.naming import safe_id

        stamp = started.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        return cls(output_root / safe_id(eval_set_id) / f"{stamp}-{run_id}")


def new_run_id() -> str:
    return secrets.token_hex(4)


@dataclass
class StageCounts:
    """What a stage did: how many records it wrote and how many it found already done,
    and how long it took (wall seconds)."""

    written: int = 0
    skipped: int = 0
    errored: int = 0
    elapsed_s: float = 0.0


# ---------------------------------------------------------------------------- trials


TurnSourceFor = Callable[[EvalCase], UserTurnSource]


def trial_plan(eval_set: EvalSet, runs: int) -> Iterator[tuple[EvalCase, int]]:
    """Every (case, trial index), case by case."""
    for case in eval_set.eval_cases:
        for index in range(runs):
            yield case, index


def completed_keys(path: Path) -> set[TrialKey]:
    """The (case, trial) keys already written to a trials/judged file."""
    from agentflow_eval.files.jsonl import iter_raw

    keys: set[TrialKey] = set()
    for raw in iter_raw(path):
        trial = raw.get("trial", raw)
        keys.add((trial["case_id"], int(trial["trial_index"])))
    return keys


async def run_trials(
    agent: AgentUnderTest,
    eval_set: EvalSet,
    out_path: Path,
    *,
    runs: int = DEFAULT_RUNS,
    max_concurrency: int = 16,
    settings: TrialSettings | None = None,
    turn_source_for: TurnSourceFor | None = None,
    on_trial: Callable[[Trial], None] | None = None,
    rate_limiter: RateLimiter | None = None,
) -> StageCounts:
    """Run every case ``runs`` times, at most ``max_concurrency`` trials at once, appending
    each finished trial to ``out_path``. Trials already in the file are skipped (resume).

    Model calls follow ``rate_limiter`` (default: the limiter already current, if any).
    """
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
    settings = settings or TrialSettings()
    started = time.perf_counter()
    done = completed_keys(out_path)
    counts = StageCounts(skipped=len(done))
    plan = ((c, i) for c, i in trial_plan(eval_set, runs) if (c.eval_id, i) not in done)
    source_for = turn_source_for or UserTurnSource

    with JsonlWriter[Trial](out_path) as writer, use_rate_limiter(rate_limiter):

        async def run_one(item: tuple[EvalCase, int]) -> None:
            case, index = item
            trial = await run_trial(agent, case, index, settings, source_for(case))
            writer.write(trial)
            counts.written += 1
            counts.errored += trial.error is not None
            if on_trial is not None:
                on_trial(trial)

        async with model_clients():
            await run_pool(plan, run_one, max_concurrency)
    counts.elapsed_s = time.perf_counter() - started
    return counts


async def run_pool(
    items: Iterable[T], work: Callable[[T], Awaitable[None]], concurrency: int
) -> None:
    """Run ``work`` over ``items`` with at most ``concurrency`` in flight. Memory stays
    O(concurrency) however many items there are: workers pull from one shared iterator."""
    iterator = iter(items)

    async def worker() -> None:
        for item in iterator:  # single event loop: next() never races
            await work(item)

    async with asyncio.TaskGroup() as group:
        for _ in range(concurrency):
            group.create_task(worker())


# ---------------------------------------------------------------------------- judging


def trial_status(trial: Trial, results: list[CriterionResult]) -> TrialStatus:
    """errored beats failed beats not_evaluated beats passed; skipped criteria don't count."""
    if trial.error is not None:
        return "errored"
    if any(r.status == "failed" for r in results):
        return "failed"
    if any(r.status == "not_evaluated" for r in results):
        return "not_evaluated"
    return "passed"


async def judge_trial(
    case: EvalCase,
    trial: Trial,
    criteria: list[Criterion],
    config: EvalConfig,
    context_extras: dict[str, Any] | None = None,
) -> TrialResult:
    """Every criterion's verdict on one trial. A criterion that raises is recorded as not
    evaluated with the error: a buggy criterion never stops the run."""
    ctx = CriterionContext(case=case, trial=trial, config=config, **(context_extras or {}))

    async def one(criterion: Criterion) -> CriterionResult:
        try:
            return await criterion.evaluate(ctx)
        except Exception as exc:
            return CriterionResult(
                criterion=criterion.name,
                label=criterion.label,
                status="not_evaluated",
                threshold=criterion.threshold,
                reason=f"criterion raised {type(exc).__name__}: {exc}",
            )

    results = list(await asyncio.gather(*(one(c) for c in criteria)))
    return TrialResult(trial=trial, criteria=results, status=trial_status(trial, results))


async def judge_trials(
    eval_set: EvalSet,
    config: EvalConfig,
    trials_path: Path,
    out_path: Path,
    *,
    concurrency: int = 64,
    context_extras: dict[str, Any] | None = None,
    rate_limiter: RateLimiter | None = None,
) -> StageCounts:
    """Judge every trial in ``trials_path`` into ``out_path``; already judged trials are
    skipped (resume). LLM judges limit themselves; ``concurrency`` bounds trials in flight.

    Judge calls follow ``rate_limiter``, else the limiter already current, else one built
    from ``config.rate_limits``.
    """
    started = time.perf_counter()
    if rate_limiter is None and current_rate_limiter() is None and config.rate_limits:
        rate_limiter = RateLimiter.from_config(config)
    cases = {case.eval_id: case for case in eval_set.eval_cases}
    criteria_by_case = {case_id: build_criteria(config, case) for case_id, case in cases.items()}
    done = completed_keys(out_path)
    counts = StageCounts(skipped=len(done))
    pending = (t for t in iter_records(trials_path, Trial) if t.key not in done)

    with JsonlWriter[TrialResult](out_path) as writer, use_rate_limiter(rate_limiter):

        async def judge_one(trial: Trial) -> None:
            case = cases.get(trial.case_id)
            if case is None:
                raise ValueError(
                    f"{trials_path}: trial of case {trial.case_id!r}, which is not in eval set "
                    f"{eval_set.eval_set_id!r} (was the run resumed with another eval set?)"
                )
            result = await judge_trial(
                case, trial, criteria_by_case[trial.case_id], config, context_extras
            )
            writer.write(result)
            counts.written += 1
            counts.errored += result.status == "errored"

        async with model_clients():
            await run_pool(pending, judge_one, concurrency)
    counts.elapsed_s = time.perf_counter() - started
    return counts


# ---------------------------------------------------------------------------- aggregate


@dataclass
class RunMeta:
    """What the results say about the run itself."""

    run_id: str
    agent: str
    started_at: datetime
    runs_per_case: int
    agent_model: str | None = None
    judge_model: str | None = None
    simulated: bool = False
    notes: list[str] = field(default_factory=list)

    def label_models(self, agent_model: str | None, config: EvalConfig) -> None:
        """Record the agent's and the judges' models, and whether either is the offline
        demo model (then every report says the results are simulated)."""
        from agentflow_eval.demo.names import is_demo_model

        self.agent_model = agent_model
        self.judge_model = judge_model_of(config)
        self.simulated = is_demo_model(agent_model) or is_demo_model(self.judge_model)


def judge_model_of(config: EvalConfig) -> str | None:
    """The judge model of a run, if any criterion uses an LLM judge: the criteria's own
    model when they agree on one, else the run-wide default."""
    from agentflow_eval.criteria.registry import known_llm_criteria

    judged = [name for name in config.criteria if name in known_llm_criteria()]
    if not judged:
        return None
    own = {config.criteria[name].judge_model for name in judged} - {None}
    return own.pop() if len(own) == 1 else config.judge.model


@dataclass
class _CriterionTally:
    label: str = ""
    threshold: float | None = None
    scores: list[float] = field(default_factory=list)
    passed: int = 0
    failed: int = 0
    not_evaluated: int = 0
    skipped: int = 0

    def add(self, result: CriterionResult) -> None:
        self.label = self.label or result.label
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
        )


@dataclass
class _CaseTally:
    statuses: dict[str, int] = field(default_factory=dict)
    criteria: dict[str, _CriterionTally] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    judge_usage: Usage = field(default_factory=Usage)
    judge_cache_hits: int = 0

    def add(self, result: TrialResult) -> None:
        self.statuses[result.status] = self.statuses.get(result.status, 0) + 1
        self.latencies.append(result.trial.duration_ms)
        self.usage.add(result.trial.usage)
        for criterion in result.criteria:
            key = _criterion_key(criterion)
            self.criteria.setdefault(key, _CriterionTally()).add(criterion)
            if criterion.usage is not None:
                self.judge_usage.add(criterion.usage)
            self.judge_cache_hits += int(criterion.details.get("cached_samples", 0) or 0)

    def count(self, status: str) -> int:
        return self.statuses.get(status, 0)


def _criterion_key(result: CriterionResult) -> str:
    """Expectation criteria (calls_tool, final_contains) may appear several times per case
    with different targets: key them by label too."""
    if result.criterion in ("calls_tool", "final_contains"):
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
        result = TrialResult.model_validate_json(line)
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
    for case in eval_set.eval_cases:
        tally = tallies[case.eval_id]
        runs = sum(tally.statuses.values())
        passed = tally.count("passed")
        low, high = wilson_interval(passed, runs)
        ks = _k_values(runs) if runs else []
        cases.append(
            CaseResult(
                case_id=case.eval_id,
                label=case_label(case, config, tally),
                runs=runs,
                passed=passed,
                failed=tally.count("failed"),
                errored=tally.count("errored"),
                not_evaluated=tally.count("not_evaluated"),
                pass_rate=passed / runs if runs else 0.0,
                ci_low=low,
                ci_high=high,
                pass_at_k={str(k): pass_at_k(runs, passed, k) for k in ks},
                pass_hat_k={str(k): pass_hat_k(runs, passed, k) for k in ks},
                criteria=[t.summary(name) for name, t in tally.criteria.items()],
                mean_latency_ms=sum(tally.latencies) / len(tally.latencies)
                if tally.latencies
                else 0.0,
                usage=tally.usage,
                judge_usage=tally.judge_usage,
                expected=expected_turns(case),
            )
        )
        for name, crit in tally.criteria.items():
            run_criteria.setdefault(name, _CriterionTally()).merge(crit)
        totals.trials += runs
        totals.passed += passed
        totals.failed += tally.count("failed")
        totals.errored += tally.count("errored")
        totals.not_evaluated += tally.count("not_evaluated")
        totals.usage.add(tally.usage)
        totals.judge_usage.add(tally.judge_usage)
        totals.judge_cache_hits += tally.judge_cache_hits
    totals.pass_rate = totals.passed / totals.trials if totals.trials else 0.0
    totals.ci_low, totals.ci_high = wilson_interval(totals.passed, totals.trials)
    totals.judge_calls = totals.judge_usage.calls

    finished = finished_at or datetime.now(UTC)
    return RunResult(
        run_id=meta.run_id,
        eval_set_id=eval_set.eval_set_id,
        eval_set_name=eval_set.name,
        agent=meta.agent,
        agent_model=meta.agent_model,
        judge_model=meta.judge_model,
        simulated=meta.simulated,
        runs_per_case=meta.runs_per_case,
        started_at=meta.started_at,
        finished_at=finished,
        duration_s=(finished - meta.started_at).total_seconds(),
        config=config.model_dump(mode="json", exclude_defaults=True),
        totals=totals,
        criteria=[t.summary(name) for name, t in run_criteria.items()],
        cases=cases,
        trials=kept,
        notes=list(meta.notes),
    )


# ---------------------------------------------------------------------------- all at once


async def evaluate(
    agent: AgentUnderTest,
    eval_set: EvalSet,
    config: EvalConfig | None = None,
    *,
    output_dir: Path,
    runs: int | None = None,
    max_concurrency: int = 16,
    settings: TrialSettings | None = None,
    turn_source_for: TurnSourceFor | None = None,
    context_extras: dict[str, Any] | None = None,
    meta: RunMeta | None = None,
    rate_limiter: RateLimiter | None = None,
) -> RunResult:
    """The whole pipeline without Prefect: trials, judging, aggregation, results.json.

    One rate limiter (``rate_limiter``, else one from ``config.rate_limits``) serves the
    trials and the judges alike.
    """
    config = config or EvalConfig.default()
    runs = runs or config.runs or DEFAULT_RUNS
    meta = meta or RunMeta(
        run_id=new_run_id(),
        agent=agent.name,
        started_at=datetime.now(UTC),
        runs_per_case=runs,
    )
    paths = RunPaths(output_dir)
    if turn_source_for is None:
        from agentflow_eval.run.simulated_user import turn_source_factory

        turn_source_for = turn_source_factory(config)
    limiter = rate_limiter or current_rate_limiter() or RateLimiter.from_config(config)
    await run_trials(
        agent,
        eval_set,
        paths.trials,
        runs=runs,
        max_concurrency=max_concurrency,
        settings=settings,
        turn_source_for=turn_source_for,
        rate_limiter=limiter,
    )
    await judge_trials(
        eval_set,
        config,
        paths.trials,
        paths.judged,
        context_extras=context_extras,
        rate_limiter=limiter,
    )
    result = aggregate(eval_set, config, iter_records(paths.judged, TrialResult), meta)
    write_results_json(result, paths.results)
    return result
