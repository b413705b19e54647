"""The judge checked against people, through the real pipeline: a Python agent whose
answers are right on a planted 70% of trials, the built-in ``final_response_match_v2``
judge answered by the scripted server and made wrong on a planted 20% of the right
answers and of the wrong ones, and labels for a stratified sample of its verdicts.

A re-judge of the run finds the labels beside it, and a later run of the same agent
finds them in the label bank (its judged content is the same): both report sensitivity,
specificity and κ whose intervals hold the planted values, and a corrected pass rate
whose interval holds the true rate while the raw one's does not."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.agents.base import SessionContext
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.criteria.judges.cache import StoreJudgeCache
from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.models.config import CriterionConfig, EvalConfig, JudgeSettings
from agentflow_eval.models.evalset import EvalCase, EvalSet, Invocation, Message
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.evaluate import evaluate, rejudge
from agentflow_eval.review.bank import LabelBank
from agentflow_eval.review.estimates import cohens_kappa
from agentflow_eval.review.labels import LABELS_FILE, Label, read_labels
from agentflow_eval.review.recording import record_labels
from agentflow_eval.review.sampling import plan_review
from agentflow_eval.storage.local import LocalStore
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

KEY_ENV = "AGENTFLOW_TEST_REVIEW_KEY"
CASES, RUNS = 100, 4
TRUE_RATE, WRONG = 0.7, 0.2
CRITERION = "final_response_match_v2"
AT = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)
ANSWER = re.compile(r"ANSWER (\S+) (\d+) (right|wrong)")


@dataclass(frozen=True)
class Plant:
    """Which trials the agent gets right, and which of its verdicts the judge gets
    wrong: exactly ``WRONG`` of the right answers and of the wrong ones."""

    right: frozenset[tuple[str, int]]
    flipped: frozenset[tuple[str, int]]

    @classmethod
    def seeded(cls, seed: int) -> Plant:
        rng = random.Random(seed)
        keys = [(f"case_{c:03d}", t) for c in range(CASES) for t in range(RUNS)]
        rng.shuffle(keys)
        right = keys[: round(TRUE_RATE * len(keys))]
        wrong = keys[len(right) :]
        flipped = right[: round(WRONG * len(right))] + wrong[: round(WRONG * len(wrong))]
        return cls(frozenset(right), frozenset(flipped))

    def figures(self) -> dict[str, float]:
        """The judge's planted sensitivity, specificity and κ, and the true pass rate."""
        total = CASES * RUNS
        tp = len(self.right - self.flipped)
        fn = len(self.right & self.flipped)
        fp = len(self.flipped - self.right)
        tn = total - tp - fn - fp
        return {
            "sensitivity": tp / (tp + fn),
            "specificity": tn / (tn + fp),
            "kappa": cohens_kappa(tp, fp, fn, tn),
            "true_rate": len(self.right) / total,
        }


EVAL_SET = EvalSet(
    eval_set_id="capitals",
    eval_cases=[
        EvalCase(
            eval_id=f"case_{c:03d}",
            conversation=[
                Invocation(
                    user_content=Message.of(f"What is the capital of country {c}?"),
                    expected_final_response=Message.of(f"The capital {c}.", role="model"),
                )
            ],
        )
        for c in range(CASES)
    ],
)


def agent_of(plant: Plant) -> PythonAgent:
    def answer(message: str, session: SessionContext) -> str:
        key = (session.case_id, session.trial_index)
        return f"ANSWER {key[0]} {key[1]} {'right' if key in plant.right else 'wrong'}"

    return PythonAgent(answer)


def judge_of(plant: Plant) -> Any:
    """The scripted judge: valid for a right answer, invalid for a wrong one, and the
    other way round on the planted trials."""

    def reply(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        case, trial, verdict = ANSWER.findall(prompt)[-1]
        valid = (verdict == "right") != ((case, int(trial)) in plant.flipped)
        return Reply.text(
            json.dumps({"reasoning": "scripted", "verdict": "valid" if valid else "invalid"})
        )

    return reply


@pytest.fixture
def judge_config(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[EvalConfig, Plant]]:
    monkeypatch.setenv(KEY_ENV, "test")
    plant = Plant.seeded(32)
    with ScriptedOpenAIServer(handler=judge_of(plant)) as server:
        settings = JudgeSettings(model="openai/judge", api_base=server.url, api_key_env=KEY_ENV)
        criteria = {CRITERION: CriterionConfig(threshold=0.5, num_samples=1)}
        yield EvalConfig(criteria=criteria, judge=settings, max_concurrency=16), plant


def truthful(plant: Plant, run: RunResult) -> list[Label]:
    """A careful reviewer's labels of a stratified sample of the run's verdicts."""
    plan = plan_review(run, size=160, seed=32)
    assert {s.verdict: s.planned for s in plan.strata} == {"pass": 80, "fail": 80}
    return [
        Label(
            run_id=item.run_id,
            case_id=item.case_id,
            trial=item.trial,
            criterion=item.criterion,
            content_key=item.content_key,
            label="pass" if (item.case_id, item.trial) in plant.right else "fail",
            reviewer="ana",
            labelled_at=AT,
        )
        for item in plan.items
    ]


def assert_planted_values_found(run: RunResult, plant: Plant) -> None:
    [agreement] = run.judge_agreement
    want = plant.figures()
    assert want["sensitivity"] == want["specificity"] == pytest.approx(1 - WRONG)
    for name in ("sensitivity", "specificity", "kappa"):
        estimate = getattr(agreement, name)
        assert estimate is not None, name
        assert estimate.low <= want[name] <= estimate.high, (name, estimate, want[name])
    raw, corrected = agreement.raw_pass_rate, agreement.corrected_pass_rate
    assert corrected is not None
    assert not raw.low <= want["true_rate"] <= raw.high, raw
    assert corrected.low <= want["true_rate"] <= corrected.high, corrected
    assert agreement.labelled_trials == 160


async def test_labels_measure_the_judge_on_a_rejudge_and_on_a_later_run(
    judge_config: tuple[EvalConfig, Plant], tmp_path: Path
) -> None:
    config, plant = judge_config
    root = tmp_path / "runs"
    cache = StoreJudgeCache(LocalStore(tmp_path / "judge-cache"))
    first = await evaluate(
        agent_of(plant), EVAL_SET, config, runs=RUNS, output_dir=root, judge_cache=cache
    )
    assert first.judge_agreement == []  # nobody has labelled anything yet
    (source,) = root.glob(f"*/*-{first.run_id}")
    labels = truthful(plant, read_results_json(source / "results.json"))
    record_labels(source, labels, LabelBank.in_folder(root))

    # a re-judge of the run: its labels are found beside its source, and kept beside it
    again = await rejudge(source, config, eval_set=EVAL_SET, judge_cache=cache)
    (folder,) = root.glob(f"*/*-{again.run_id}")
    assert_planted_values_found(again, plant)
    assert not again.judge_agreement[0].untrustworthy  # no level asked
    assert {label.content_key for label in read_labels(folder)} == {
        label.content_key for label in labels
    }
    stored = read_results_json(folder / "results.json")
    assert stored.judge_agreement == again.judge_agreement

    # a later run of the same agent judges the same content: the bank's labels count;
    # held to 90% agreement, the judge (right on 80%) is named untrustworthy
    later = await evaluate(
        agent_of(plant),
        EVAL_SET,
        config,
        runs=RUNS,
        output_dir=root,
        judge_cache=cache,
        min_judge_agreement=0.9,
    )
    assert_planted_values_found(later, plant)
    [agreement] = later.judge_agreement
    assert agreement.untrustworthy and agreement.min_agreement == 0.9
    (later_folder,) = root.glob(f"*/*-{later.run_id}")
    assert len(read_labels(later_folder)) == 160
    assert (later_folder / LABELS_FILE).is_file()
