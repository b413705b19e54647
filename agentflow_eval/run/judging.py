"""The judge stage: every criterion's verdict on every trial in ``trials.jsonl``, each
judged trial appended to ``judged.jsonl``. Deterministic criteria answer at once; LLM
judges go through the judge runtime the caller passes (its limiter, retries and cache).
Trials already judged are skipped (resume)."""

from __future__ import annotations

import asyncio
import time

from agentflow_eval.criteria.base import Criterion, CriterionContext
from agentflow_eval.criteria.judges.runtime import JudgeRuntime
from agentflow_eval.criteria.registry import build_criteria
from agentflow_eval.files.jsonl import JsonlWriter, iter_records
from agentflow_eval.llm.retry import ProviderAuthError
from agentflow_eval.models import defaults
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalCase
from agentflow_eval.models.results import CriterionResult, Trial, TrialResult, TrialStatus
from agentflow_eval.redaction import might_contain_secret, redact_data
from agentflow_eval.run.next_step import next_step_of
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.resumable import StageCounts, completed_keys, run_pool

__all__ = ["judge_trial", "judge_trials", "redacted_result", "trial_status"]


def trial_status(trial: Trial, results: list[CriterionResult]) -> TrialStatus:
    """errored beats failed beats not_evaluated beats passed; skipped criteria don't count.

    A trial passes only on evidence: at least one criterion passed and none failed or went
    without a verdict. A trial whose criteria were all skipped (a simulated-user scenario
    judged only against references it does not have), or that had none, was not
    evaluated: nothing said it was right."""
    if trial.error is not None:
        return "errored"
    if any(r.status == "failed" for r in results):
        return "failed"
    if any(r.status == "not_evaluated" for r in results):
        return "not_evaluated"
    if not any(r.status == "passed" for r in results):
        return "not_evaluated"
    return "passed"


async def judge_trial(
    case: EvalCase,
    trial: Trial,
    criteria: list[Criterion],
    config: EvalConfig,
    judge: JudgeRuntime | None,
) -> TrialResult:
    """Every criterion's verdict on one trial (on its next step alone for a case judged on
    that, :func:`~agentflow_eval.run.next_step.next_step_of`; the result keeps the whole
    trial). A criterion that raises is recorded as not evaluated with the error: a buggy
    criterion never stops the run."""
    judged = next_step_of(trial) if case.next_step_only else trial
    ctx = CriterionContext(case=case, trial=judged, config=config, judge=judge)

    async def one(criterion: Criterion) -> CriterionResult:
        try:
            return await criterion.evaluate(ctx)
        except ProviderAuthError:
            raise  # refused credentials stop the run: no verdict is recorded for them
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


def redacted_result(result: TrialResult) -> TrialResult:
    """``result`` with every string redacted: a criterion's reason or details may quote
    an error or an answer that holds a key."""
    if not might_contain_secret(result.model_dump_json()):
        return result
    return TrialResult.model_validate(redact_data(result.model_dump(mode="json")))


async def judge_trials(plan: RunPlan, judge: JudgeRuntime) -> StageCounts:
    """Judge every trial of ``plan``'s trials file not yet in its judged file, LLM judges
    asking through ``judge``."""
    started = time.perf_counter()
    eval_set, config = plan.eval_set, plan.config
    cases = {case.eval_id: case for case in eval_set.eval_cases}
    criteria_by_case = {case_id: build_criteria(config, case) for case_id, case in cases.items()}
    done = completed_keys(plan.paths.judged)
    counts = StageCounts(skipped=len(done))
    pending = (t for t in iter_records(plan.paths.trials, Trial) if t.key not in done)

    with JsonlWriter[TrialResult](plan.paths.judged) as writer:

        async def judge_one(trial: Trial) -> None:
            case = cases.get(trial.case_id)
            if case is None:
                raise ValueError(
                    f"{plan.paths.trials}: trial of case {trial.case_id!r}, which is not in "
                    f"eval set {eval_set.eval_set_id!r} (was the run resumed with another "
                    "eval set?)"
                )
            result = await judge_trial(case, trial, criteria_by_case[trial.case_id], config, judge)
            writer.write(redacted_result(result))
            counts.written += 1
            counts.errored += result.status == "errored"

        try:
            await run_pool(pending, judge_one, defaults.JUDGE_STAGE_CONCURRENCY)
        except* ProviderAuthError as refused:  # the run stops: say why, once
            error = refused.exceptions[0]
            error.run_dir = str(plan.paths.run_dir)  # type: ignore[union-attr]
            raise error from None
    counts.elapsed_s = time.perf_counter() - started
    return counts
