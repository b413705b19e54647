"""response_match_score: ROUGE-1 as Google ADK computes it, averaged over invocations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from criteria_helpers import case, context, invocation, scenario_case, trial, turn

from agentflow_eval.criteria import response as response_module
from agentflow_eval.criteria.response import (
    ResponseMatchCriterion,
    build_response_match,
    rouge1,
    rouge_tokens,
)
from agentflow_eval.models.config import CriterionConfig, EvalConfig


def criterion(**options) -> ResponseMatchCriterion:
    return build_response_match("response_match_score", CriterionConfig(**options), EvalConfig())


# --- ROUGE-1, checked against values worked out by hand --------------------------------


def test_rouge1_precision_is_over_the_answer_and_recall_over_the_reference():
    # answer: tokyo is sunny (3); reference: the weather in tokyo is sunny (6); overlap 3
    value = rouge1("Tokyo is sunny", "The weather in Tokyo is sunny")
    assert (value.precision, value.recall) == (1.0, 0.5)
    assert value.fmeasure == pytest.approx(2 / 3)


def test_rouge1_stems_words():
    # "running" and "runs" both stem to "run": overlap 3 of 3 answer and 4 reference tokens
    assert rouge1("the dog runs", "the dog is running").fmeasure == pytest.approx(6 / 7)
    assert rouge1("run", "running").fmeasure == 1.0


def test_rouge1_counts_repeated_words_and_ignores_case_and_punctuation():
    # reference has "the" twice, the answer once: overlap 2 of 3 (a set overlap would give 1.0)
    assert rouge1("the cat", "the the cat").fmeasure == pytest.approx(0.8)
    # the weather example's New York answer: 9 answer tokens all in the 14 reference tokens -> 18/23
    value = rouge1(
        "The weather in New York is sunny, 72°F.",
        "The weather in New York is currently sunny with a temperature of 72°F.",
    )
    assert value.fmeasure == pytest.approx(18 / 23)


def test_rouge1_of_an_empty_answer_is_zero():
    assert rouge1("", "hello world").fmeasure == 0.0


def test_the_scorer_is_built_once():
    response_module._scorer.cache_clear()
    rouge1("a b", "a b")
    rouge1("c d", "c e")
    assert response_module._scorer.cache_info().currsize == 1


# --- the criterion ------------------------------------------------------------------------


async def test_mean_over_invocations_with_an_expected_response():
    checked = case(
        invocation(final="The weather in Tokyo is sunny"),
        invocation(final=None),  # nothing to compare: left out of the mean
        invocation(final="the dog is running"),
    )
    tried = trial(turn(final="Tokyo is sunny"), turn(final="anything"), turn(final="the dog runs"))
    result = await criterion().evaluate(context(checked, tried))
    assert result.score == pytest.approx((2 / 3 + 6 / 7) / 2)
    assert result.status == "failed"  # 0.76 < 0.8, ADK's default threshold
    rows = result.details["invocations"]
    assert [row["invocation_id"] for row in rows] == ["case-1", "case-3"]
    assert rows[0]["expected"] == "The weather in Tokyo is sunny"
    assert rows[0]["actual"] == "Tokyo is sunny"
    assert rows[0]["precision"] == 1.0 and rows[0]["recall"] == 0.5


async def test_threshold_and_label():
    crit = criterion(threshold=0.6)
    assert crit.label == "response ROUGE-1 >= 0.6"
    assert criterion().label == "response ROUGE-1 >= 0.8"
    one = case(invocation(final="The weather in Tokyo is sunny"))
    result = await crit.evaluate(context(one, trial(turn(final="Tokyo is sunny"))))
    assert (result.status, result.threshold) == ("passed", 0.6)


async def test_missing_or_empty_answers_score_zero():
    two = case(invocation(final="sunny in Tokyo"), invocation(final="cloudy in London"))
    tried = trial(turn(final=None), error="timed out")  # no answer, and no second turn
    result = await criterion().evaluate(context(two, tried))
    assert result.score == 0.0
    rows = result.details["invocations"]
    assert [row["missing_turn"] for row in rows] == [False, True]
    assert result.reason == "no final response for case-1, case-2"


async def test_a_perfect_answer_passes():
    one = case(invocation(final="Tokyo is sunny at 75°F"))
    result = await criterion().evaluate(context(one, trial(turn(final="tokyo is SUNNY at 75 F"))))
    assert (result.status, result.score, result.reason) == ("passed", 1.0, None)


async def test_skipped_when_no_invocation_has_an_expected_response():
    result = await criterion().evaluate(context(case(invocation()), trial(turn())))
    assert result.status == "skipped"
    assert "no invocation with an expected final response" in result.reason


async def test_skipped_for_a_conversation_scenario():
    result = await criterion().evaluate(context(scenario_case(), trial(turn())))
    assert result.status == "skipped"
    assert "conversation_scenario" in result.reason


# --- equal to Google ADK 2.13, in every script ------------------------------------------

ADK_VALUES = json.loads(
    (Path(__file__).parents[2] / "fixtures" / "adk213" / "rouge1_values.json").read_text("utf-8")
)


def test_the_adk_values_were_computed_by_adk_2_13():
    assert ADK_VALUES["computed_with"]["google-adk"].startswith("2.13.")
    names = {pair["name"] for pair in ADK_VALUES["pairs"]}
    for script in (
        "cyrillic",
        "chinese",
        "japanese",
        "korean",
        "arabic",
        "hebrew",
        "devanagari",
        "thai",
        "greek",
        "french",
        "mixed_script",
        "numbers",
        "punctuation",
        "identical",
        "empty",
    ):
        assert any(script in name for name in names), script


@pytest.mark.parametrize("pair", ADK_VALUES["pairs"], ids=lambda pair: pair["name"])
def test_rouge1_equals_adk_2_13(pair: dict) -> None:
    got = rouge1(pair["response"], pair["reference"])
    assert got.precision == pytest.approx(pair["precision"], abs=1e-9)
    assert got.recall == pytest.approx(pair["recall"], abs=1e-9)
    assert got.fmeasure == pytest.approx(pair["fmeasure"], abs=1e-9)
    assert rouge_tokens(pair["response"]) == pair["response_tokens"]
    assert rouge_tokens(pair["reference"]) == pair["reference_tokens"]


@pytest.mark.parametrize(
    "text",
    [
        "заказ отправлен сегодня",
        "订单今天已发货",
        "주문이 오늘 발송되었습니다",
        "تم شحن الطلب اليوم",
        "ההזמנה נשלחה היום",
        "आपका ऑर्डर आज भेज दिया गया है",
        "สั่งซื้อแล้ววันนี้",
        "Η παραγγελία στάλθηκε σήμερα",
        "Ça coûte 12 € à Zürich",
    ],
)
def test_an_answer_identical_to_its_reference_scores_one_in_any_script(text: str) -> None:
    assert rouge1(text, text).fmeasure == 1.0


def test_accents_are_kept_and_ascii_words_are_stemmed_next_to_other_scripts():
    assert rouge_tokens("Café RUNNING 東京") == ["café", "run", "東", "京"]
    assert rouge1("cafe", "café").fmeasure == 0.0


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        ("Tokyo is sunny, 75F; London's cloudy.", "Tokyo: sunny and 75 F. London's cloudy!"),
        ("Running runners ran quickly", "the runner runs quick, running"),
        ("", "nothing here"),
    ],
)
def test_ascii_text_scores_exactly_as_the_rouge_score_package_with_stemming(
    answer: str, reference: str
) -> None:
    """On ASCII text the tokens are rouge-score's own (its default tokenizer with the
    Porter stemmer); the remembering stemmer changes speed only."""
    from rouge_score import rouge_scorer

    expected = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True).score(
        target=reference, prediction=answer
    )["rouge1"]
    got = rouge1(answer, reference)
    assert (got.precision, got.recall, got.fmeasure) == (
        expected.precision,
        expected.recall,
        expected.fmeasure,
    )
