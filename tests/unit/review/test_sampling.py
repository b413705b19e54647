"""The review sample: stratified by the judge's verdict, disagreeing trials first when
asked, labelled content never asked again, the size a width needs stated."""

from __future__ import annotations

import pytest

from agentflow_eval.errors import InputError
from agentflow_eval.review.sampling import labels_for_width, plan_review
from tests.support.judged_runs import CRITERION, planted_run


def test_a_sized_plan_asks_both_verdicts_equally_however_rare_one_is() -> None:
    planted = planted_run(cases=50, trials=4, true_pass_rate=0.9, wrong_share=0.05)
    plan = plan_review(planted.run, size=40)
    strata = {s.verdict: s for s in plan.strata}
    assert strata["fail"].trials < 40 < strata["pass"].trials  # the fails are rare
    assert strata["pass"].planned == strata["fail"].planned == 20
    verdicts = [item.verdict for item in plan.items]
    assert verdicts.count("pass") == verdicts.count("fail") == 20
    assert plan.criteria == [CRITERION]
    # interleaved, not every pass and then every fail
    assert verdicts[:20].count("pass") not in (0, 20)


def test_a_small_stratum_gives_what_it_has_and_the_other_the_rest() -> None:
    planted = planted_run(cases=10, trials=2, true_pass_rate=0.9, wrong_share=0.0)
    plan = plan_review(planted.run, size=10)
    strata = {s.verdict: s for s in plan.strata}
    assert strata["fail"].planned == strata["fail"].trials == 2
    assert strata["pass"].planned == 8


def test_disagreeing_trials_come_first_when_asked() -> None:
    planted = planted_run(cases=50, trials=4, disagree_share=0.1)
    plan = plan_review(planted.run, size=60, disagreeing_first=True)
    flags = [item.samples_disagreed for item in plan.items]
    first_agreeing = flags.index(False)
    assert first_agreeing > 0 and not any(flags[first_agreeing:])
    plain = plan_review(planted.run, size=60)
    assert [i.samples_disagreed for i in plain.items] != flags


def test_labelled_content_is_never_asked_again() -> None:
    planted = planted_run(cases=20, trials=2)
    first = plan_review(planted.run, size=20, seed=3)
    keys = {item.content_key for item in first.items if item.content_key}
    second = plan_review(planted.run, size=20, seed=3, already_labelled=keys)
    assert not keys & {item.content_key for item in second.items}
    assert sum(s.labelled for s in second.strata) == 20


def test_the_same_seed_gives_the_same_plan_and_another_seed_another() -> None:
    planted = planted_run(cases=30, trials=3)
    one = [item.key for item in plan_review(planted.run, size=20, seed=1).items]
    assert one == [item.key for item in plan_review(planted.run, size=20, seed=1).items]
    assert one != [item.key for item in plan_review(planted.run, size=20, seed=2).items]


def test_a_width_sizes_each_stratum_and_the_plan_says_so() -> None:
    assert labels_for_width(0.2) == 97  # 1.96² · ¼ / 0.1²
    assert labels_for_width(0.1) == 385
    assert labels_for_width(0.2, population=50) == 34  # finite-population correction
    planted = planted_run(cases=100, trials=4, true_pass_rate=0.7, wrong_share=0.2)
    plan = plan_review(planted.run, width=0.2)
    for stratum in plan.strata:
        assert stratum.planned == stratum.needed == labels_for_width(0.2, stratum.trials)
    assert plan.needed_per_stratum == 97
    assert "97 labels per verdict" in plan.needed_for_width
    assert "this plan reaches it" in plan.needed_for_width


def test_an_item_shows_what_a_reviewer_needs() -> None:
    planted = planted_run(cases=5, trials=2)
    item = plan_review(planted.run, size=4).items[0]
    assert item.conversation[0].user_text.startswith("What is the capital")
    assert item.conversation[0].tool_calls[0].name == "lookup"
    assert item.reference_answer == item.conversation[0].reference
    assert item.reference_answer and item.final_answer
    assert item.reasoning and item.reasoning[0].startswith("sample 0")
    assert item.threshold == 0.5 and item.content_key


def test_a_criterion_without_verdicts_is_refused() -> None:
    planted = planted_run(cases=5, trials=2)
    with pytest.raises(InputError, match="'nope' gave run planted1 no pass or fail"):
        plan_review(planted.run, criteria=["nope"])
    with pytest.raises(InputError, match="at least 1"):
        plan_review(planted.run, size=0)
