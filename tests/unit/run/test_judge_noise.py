"""How firmly a trial passed, and how noisy an LLM judge is, from the votes it took."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentflow_eval.models.results import CriterionResult, Trial, TrialError, TrialResult
from agentflow_eval.run.judge_noise import JudgeNoise, sample_disagreement
from agentflow_eval.run.pass_value import judge_firmness, pass_value


def judged(status: str, *rows: list[str]) -> CriterionResult:
    invocations = [{"votes": [{"verdict": v} for v in row]} for row in rows]
    return CriterionResult(
        criterion="final_response_match_v2",
        status=status,  # type: ignore[arg-type]
        score=1.0 if status == "passed" else 0.0,
        threshold=0.5,
        details={"invocations": invocations},
    )


def result(status: str, *criteria: CriterionResult, error: TrialError | None = None) -> TrialResult:
    trial = Trial(case_id="c", trial_index=0, started_at=datetime.now(UTC), error=error)
    return TrialResult(trial=trial, criteria=list(criteria), status=status)  # type: ignore[arg-type]


def test_samples_that_split_are_counted_and_weighed() -> None:
    split = judged("passed", ["valid", "valid", "invalid"])
    assert judge_firmness(split) == pytest.approx(2 / 3)
    # of three votes 2-1, two drawn at random disagree 2 times in 3
    assert sample_disagreement(split) == pytest.approx(2 / 3)
    assert sample_disagreement(judged("passed", ["valid"] * 3)) == 0.0
    assert sample_disagreement(judged("passed", ["valid"])) is None  # one sample: unmeasured


def test_a_trial_passes_as_firmly_as_its_judge() -> None:
    deterministic = CriterionResult(criterion="tool_trajectory_avg_score", status="passed", score=1)
    assert pass_value(result("passed", deterministic)) == 1.0
    assert pass_value(result("passed", deterministic, judged("passed", ["v", "v", "i"]))) == (
        pytest.approx(2 / 3)
    )
    failed_split = judged("failed", ["i", "i", "v"])
    assert pass_value(result("failed", deterministic, failed_split)) == pytest.approx(1 / 3)
    firm_fail = CriterionResult(criterion="tool_trajectory_avg_score", status="failed", score=0)
    assert pass_value(result("failed", firm_fail, failed_split)) == 0.0
    provider = TrialError(kind="infrastructure", type="ProviderUnavailable", message="503")
    assert pass_value(result("errored", error=provider)) is None
    crash = TrialError(kind="exception", type="KeyError", message="x")
    assert pass_value(result("errored", error=crash)) == 0.0
    assert pass_value(result("not_evaluated")) is None


def test_the_share_of_variance_a_noisy_judge_explains() -> None:
    noise = JudgeNoise()
    for _ in range(5):
        noise.add(judged("passed", ["v", "v", "v"]))
        noise.add(judged("failed", ["i", "i", "i"]))
    assert noise.flip_rate == 0.0 and noise.variance_share == 0.0  # a firm judge explains none
    for _ in range(10):
        noise.add(judged("passed", ["v", "v", "i"]))
    assert noise.trials == 20 and noise.split_trials == 10
    assert noise.flip_rate == pytest.approx(10 * (2 / 3) / 20)
    # passes: 5 x 1, 5 x 0, 10 x 2/3; mean 7/12; noise 10 x 2/9 / 20
    mean = (5 + 10 * 2 / 3) / 20
    assert noise.variance_share == pytest.approx((10 * 2 / 9 / 20) / (mean * (1 - mean)))
