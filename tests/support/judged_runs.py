"""Runs judged by a planted judge, for the review tests: each trial has a true verdict
(what a person would say) and the judge is wrong on trials chosen in advance, so the
agreement figures can be checked against the values planted.

The judge's verdicts are :class:`CriterionResult`s of the shape an LLM judge records
(``content_key``, ``samples_disagree``, votes with reasoning), folded by the real
:func:`~agentflow_eval.run.aggregate.aggregate` into a :class:`RunResult`.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import (
    CriterionResult,
    RecordedToolCall,
    RunResult,
    Trial,
    TrialResult,
    Turn,
)
from agentflow_eval.run.aggregate import aggregate
from agentflow_eval.run.plan import RunMeta

__all__ = ["CRITERION", "PlantedRun", "planted_run"]

CRITERION = "final_response_match_v2"
START = datetime(2026, 11, 20, 2, 30, tzinfo=UTC)


@dataclass
class PlantedRun:
    """A judged run and what was planted in it."""

    run: RunResult
    truth: dict[tuple[str, int], bool] = field(default_factory=dict)
    """(case, trial) → whether the trial truly deserves a pass."""
    wrong: set[tuple[str, int]] = field(default_factory=set)
    """The trials the judge got wrong."""

    @property
    def true_pass_rate(self) -> float:
        return sum(self.truth.values()) / len(self.truth)

    def judge_passes(self, key: tuple[str, int]) -> bool:
        return self.truth[key] != (key in self.wrong)


def planted_run(
    *,
    cases: int = 50,
    trials: int = 4,
    true_pass_rate: float = 0.7,
    wrong_share: float = 0.2,
    disagree_share: float = 0.1,
    seed: int = 0,
    run_id: str = "planted1",
    threshold: float = 0.5,
) -> PlantedRun:
    """``cases`` × ``trials`` trials, exactly ``true_pass_rate`` of them (rounded) truly
    passing, and the judge wrong on exactly ``wrong_share`` of the truly passing trials
    and of the truly failing ones (so its sensitivity and specificity are both
    ``1 - wrong_share`` on this run, up to rounding); ``disagree_share`` of the trials
    have judge samples that disagreed. Every trial's judged content differs."""
    rng = random.Random(seed)
    keys = [(f"case_{c:03d}", t) for c in range(cases) for t in range(trials)]
    order = list(keys)
    rng.shuffle(order)
    passing = set(order[: round(true_pass_rate * len(keys))])
    truth = {key: key in passing for key in keys}
    wrong: set[tuple[str, int]] = set()
    for deserved in (True, False):
        group = [key for key in order if truth[key] is deserved]
        wrong |= set(group[: round(wrong_share * len(group))])
    disagreeing = set(rng.sample(keys, round(disagree_share * len(keys))))
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "planted",
            "eval_cases": [
                {
                    "eval_id": f"case_{c:03d}",
                    "conversation": [
                        {
                            "user_content": f"What is the capital of country {c}?",
                            "expected_final_response": f"Capital {c}.",
                        }
                    ],
                }
                for c in range(cases)
            ],
        }
    )
    judged = []
    for case_id, index in keys:
        judge_passes = truth[(case_id, index)] != ((case_id, index) in wrong)
        judged.append(
            _trial_result(
                case_id, index, judge_passes, (case_id, index) in disagreeing, threshold, run_id
            )
        )
    meta = RunMeta(
        run_id=run_id,
        agent="planted-agent",
        started_at=START,
        runs_per_case=trials,
        judge_model="openai/gpt-4o-mini",
    )
    run = aggregate(eval_set, EvalConfig(), judged, meta, finished_at=START + timedelta(minutes=3))
    return PlantedRun(run, truth, wrong)


def content_key(case_id: str, index: int) -> str:
    return hashlib.sha256(f"planted:{case_id}:{index}".encode()).hexdigest()


def _trial_result(
    case_id: str, index: int, passes: bool, disagree: bool, threshold: float, run_id: str
) -> TrialResult:
    number = case_id.removeprefix("case_")
    answer = f"It is Capital {number}." if passes else f"It might be City {number}."
    trial = Trial(
        case_id=case_id,
        trial_index=index,
        turns=[
            Turn(
                invocation_id=f"{case_id}-1",
                user_text=f"What is the capital of country {int(number)}?",
                tool_calls=[RecordedToolCall(name="lookup", args={"country": number}, result="ok")],
                final_response=answer,
            )
        ],
        started_at=START,
    )
    votes = [
        {
            "verdict": "valid"
            if (passes if sample != 1 or not disagree else not passes)
            else "invalid",
            "reasoning": f"sample {sample}: the answer {'matches' if passes else 'differs'}",
            "cached": False,
        }
        for sample in range(3)
    ]
    score = 1.0 if passes else 0.0
    result = CriterionResult(
        criterion=CRITERION,
        label="answer matches reference (LLM judge)",
        status="passed" if score >= threshold else "failed",
        score=score,
        threshold=threshold,
        reason=None if passes else f"judged invalid: {case_id}-1",
        details={
            "judge_model": "openai/gpt-4o-mini",
            "num_samples": 3,
            "content_key": content_key(case_id, index),
            "invocations": [{"invocation_id": f"{case_id}-1", "votes": votes}],
            "samples_disagree": disagree,
        },
    )
    return TrialResult(trial=trial, criteria=[result], status=result.status)
