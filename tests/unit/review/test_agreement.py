"""Agreement of a judge with people, from labels of a stratified sample: the planted
error is found, the strata are weighted, labels follow their content."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agentflow_eval.review.agreement import judge_agreement
from agentflow_eval.review.estimates import cohens_kappa
from agentflow_eval.review.labels import Label
from agentflow_eval.review.sampling import ReviewItem, plan_review
from agentflow_eval.review.verdicts import VerdictLedger
from tests.support.judged_runs import CRITERION, PlantedRun, planted_run

AT = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)


def truthful(planted: PlantedRun, items: list[ReviewItem], reviewer: str = "ana") -> list[Label]:
    """What a careful person says of each item: its planted truth."""
    return [
        Label(
            run_id=item.run_id,
            case_id=item.case_id,
            trial=item.trial,
            criterion=item.criterion,
            content_key=item.content_key,
            label="pass" if planted.truth[(item.case_id, item.trial)] else "fail",
            reviewer=reviewer,
            labelled_at=AT,
        )
        for item in items
    ]


def planted_figures(planted: PlantedRun) -> dict[str, float]:
    """The judge's sensitivity, specificity, agreement and κ on the whole run."""
    cells = {(t, j): 0 for t in (True, False) for j in (True, False)}
    for key, deserved in planted.truth.items():
        cells[(deserved, planted.judge_passes(key))] += 1
    tp, fn, fp, tn = (
        cells[(True, True)],
        cells[(True, False)],
        cells[(False, True)],
        cells[(False, False)],
    )
    return {
        "sensitivity": tp / (tp + fn),
        "specificity": tn / (tn + fp),
        "agreement": (tp + tn) / len(planted.truth),
        "kappa": cohens_kappa(tp, fp, fn, tn),
    }


def agreement_of(planted: PlantedRun, labels: list[Label], **kwargs: object):
    [agreement] = judge_agreement(
        VerdictLedger.of_run(planted.run), labels, run_ids={planted.run.run_id}, **kwargs
    )
    return agreement


def test_a_judge_wrong_on_a_planted_fifth_is_measured_within_the_intervals() -> None:
    planted = planted_run(cases=250, trials=4, true_pass_rate=0.7, wrong_share=0.2, seed=11)
    plan = plan_review(planted.run, size=200, seed=11)
    agreement = agreement_of(planted, truthful(planted, plan.items))
    want = planted_figures(planted)
    assert want["sensitivity"] == want["specificity"] == pytest.approx(0.8)
    for name in ("sensitivity", "specificity", "agreement", "kappa"):
        estimate = getattr(agreement, name)
        assert estimate.low <= want[name] <= estimate.high, (name, estimate, want[name])
        assert estimate.high - estimate.low < 0.3
    raw, corrected = agreement.raw_pass_rate, agreement.corrected_pass_rate
    assert raw.value == pytest.approx(0.62)  # what the judge says
    assert not raw.low <= planted.true_pass_rate <= raw.high
    assert corrected is not None and corrected.low <= planted.true_pass_rate <= corrected.high
    assert agreement.labelled_trials == 200 and agreement.reviewers == ["ana"]


def test_the_strata_are_weighted_by_their_share_of_the_run() -> None:
    # the judge fails a quarter of the trials, the sample asks half fails: an unweighted
    # count of the labels would put the judge's sensitivity far too low
    planted = planted_run(cases=250, trials=4, true_pass_rate=0.92, wrong_share=0.2, seed=5)
    labels = truthful(planted, plan_review(planted.run, size=160, seed=5).items)
    agreement = agreement_of(planted, labels)
    want = planted_figures(planted)["sensitivity"]
    judged = {(x.case_id, x.trial): planted.judge_passes((x.case_id, x.trial)) for x in labels}
    people_pass = [x for x in labels if x.label == "pass"]
    naive = sum(judged[(x.case_id, x.trial)] for x in people_pass) / len(people_pass)
    assert agreement.sensitivity is not None
    assert agreement.sensitivity.low <= want <= agreement.sensitivity.high
    assert not agreement.sensitivity.low <= naive <= agreement.sensitivity.high
    assert naive < want - 0.1


def test_a_verdict_without_labels_leaves_the_figures_unmeasured() -> None:
    planted = planted_run(cases=40, trials=2, seed=2)
    passes = [item for item in plan_review(planted.run, size=40).items if item.verdict == "pass"]
    agreement = agreement_of(planted, truthful(planted, passes))
    assert agreement.agreement is None and agreement.corrected_pass_rate is None
    assert any("no labels yet on the judge's fail verdicts" in note for note in agreement.notes)


def test_labels_follow_their_content_and_a_tie_gives_no_verdict() -> None:
    planted = planted_run(cases=40, trials=2, seed=3)
    items = plan_review(planted.run, size=30, seed=3).items
    labels = truthful(planted, items)
    # from another run (a bank's), the same content: it counts
    moved = [label.model_copy(update={"run_id": "other", "trial": 99}) for label in labels]
    assert agreement_of(planted, moved).labelled_trials == len(items)
    # content the run never judged: it does not, and a note says so
    stale = [label.model_copy(update={"content_key": "0" * 64}) for label in labels[:3]]
    agreement = agreement_of(planted, labels + stale)
    assert agreement.labelled_trials == len(items)
    assert any("3 label(s)" in note for note in agreement.notes)
    # a second reviewer disagreeing on one trial: a tie, left out
    other = labels[0].model_copy(
        update={"reviewer": "bo", "label": "fail" if labels[0].label == "pass" else "pass"}
    )
    tied = agreement_of(planted, [*labels, other])
    assert tied.tied_trials == 1 and tied.labelled_trials == len(items) - 1
    # a reviewer's later label replaces their earlier one
    changed = labels[0].model_copy(update={"label": other.label, "labelled_at": AT + timedelta(1)})
    assert agreement_of(planted, [*labels, changed]).labels == len(items)


def test_reviewers_against_each_other() -> None:
    planted = planted_run(cases=100, trials=2, seed=4)
    items = plan_review(planted.run, size=60, seed=4).items
    ana = truthful(planted, items, "ana")
    bo = truthful(planted, items, "bo")
    bo = [  # bo disagrees with ana on every fifth trial
        label.model_copy(update={"label": "fail" if label.label == "pass" else "pass"})
        if index % 5 == 0
        else label
        for index, label in enumerate(bo)
    ]
    agreement = agreement_of(planted, ana + bo)
    [pair] = agreement.between_reviewers
    assert pair.reviewers == ("ana", "bo") and pair.trials == 60
    assert pair.agreement == pytest.approx(0.8)
    x = [label.label == "pass" for label in ana]
    y = [label.label == "pass" for label in bo]
    table = [
        sum(a and b for a, b in zip(x, y, strict=True)),
        sum(a and not b for a, b in zip(x, y, strict=True)),
        sum(b and not a for a, b in zip(x, y, strict=True)),
        sum(not a and not b for a, b in zip(x, y, strict=True)),
    ]
    assert pair.kappa is not None
    assert pair.kappa.value == pytest.approx(cohens_kappa(*table))
    assert pair.kappa.low < pair.kappa.value < pair.kappa.high


def test_a_judge_below_the_asked_agreement_is_untrustworthy() -> None:
    planted = planted_run(cases=100, trials=2, wrong_share=0.2, seed=6)
    labels = truthful(planted, plan_review(planted.run, size=80, seed=6).items)
    assert agreement_of(planted, labels, min_agreement=0.9).untrustworthy
    kept = agreement_of(planted, labels, min_agreement=0.5)
    assert not kept.untrustworthy and kept.min_agreement == 0.5
    assert not agreement_of(planted, labels).untrustworthy


def test_a_scale_label_passes_at_the_criterion_threshold() -> None:
    planted = planted_run(cases=30, trials=2, seed=8, threshold=0.5)
    items = plan_review(planted.run, size=20, seed=8).items
    scores = [
        label.model_copy(update={"label": 0.75 if label.label == "pass" else 0.25})
        for label in truthful(planted, items)
    ]
    by_verdict = agreement_of(planted, truthful(planted, items))
    by_score = agreement_of(planted, scores)
    assert by_score.agreement == by_verdict.agreement
    assert by_score.criterion == CRITERION
