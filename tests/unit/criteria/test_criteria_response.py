"""response_match_score: ROUGE-1 as Google ADK computes it, averaged over invocations."""

from __future__ import annotations

import pytest
from criteria_helpers import case, context, invocation, scenario_case, trial, turn

from agentflow_eval.criteria import response as response_module
from agentflow_eval.criteria.response import ResponseMatchCriterion, build_response_match, rouge1
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
    # seed 001's New York answer: 9 answer tokens all in the 14 reference tokens -> 18/23
    value = rouge1(
        "The weather in New York is sunny, 72°F.",
        "The weather in New York is currently sunny with a temperature of 72°F.",
    )
    assert value.fmeasure == pytest.approx(18 / 23)


def test_rouge1_does_not_stem_mostly_non_latin_text():
    # As ADK: the English stemmer is turned off when a text is mostly non-Latin script,
    # so "run" no longer matches "running".
    assert rouge1("東京の天気は晴れ run", "東京の天気は晴れ running").fmeasure == 0.0


def test_rouge1_of_an_empty_answer_is_zero():
    assert rouge1("", "hello world").fmeasure == 0.0


def test_the_scorer_is_built_once_per_stemming_choice():
    response_module._scorer.cache_clear()
    rouge1("a b", "a b")
    rouge1("c d", "c e")
    assert response_module._scorer.cache_info().currsize == 1
    assert response_module._scorer(True) is response_module._scorer(True)


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


@pytest.mark.parametrize(
    ("answer", "reference", "stemmed"),
    [
        (
            "Tokyo is sunny, 75°F; London's cloudy.",
            "Tokyo: sunny and 75 °F. London's cloudy!",
            True,
        ),
        ("Running runners ran quickly", "the runner runs quick, running", True),
        ("", "nothing here", True),
        ("東京は晴れ", "東京は晴れです", False),
    ],
)
def test_rouge1_scores_exactly_as_the_rouge_score_package(
    answer: str, reference: str, stemmed: bool
) -> None:
    """The remembering stemmer changes speed only: same numbers as rouge-score's own
    scorer with its Porter stemmer (what Google ADK runs)."""
    from rouge_score import rouge_scorer

    expected = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=stemmed).score(
        target=reference, prediction=answer
    )["rouge1"]
    got = rouge1(answer, reference)
    assert (got.precision, got.recall, got.fmeasure) == (
        expected.precision,
        expected.recall,
        expected.fmeasure,
    )


def _mostly_latin_by_name(text: str) -> bool:
    """The rule spelled out: a Unicode lookup for every character."""
    import unicodedata

    letters = [c for c in text if unicodedata.category(c).startswith("L")]
    latin = [c for c in letters if "LATIN" in unicodedata.name(c, "")]
    return not letters or len(latin) / len(letters) > 0.5


@pytest.mark.parametrize(
    "text",
    [
        "The weather in Tokyo is 75°F.",
        "Ça coûte 12 € à Zürich — très cher",
        "Погода в Москве: 5°C, пасмурно",
        "東京の天気は晴れ、気温は24度です",
        "Tokyo 東京 晴れ",
        "東京 is sunny",
        "12 345 — 67 %",
        "ÆØÅ æøå ß",
        "",
    ],
)
def test_mostly_latin_looks_up_only_non_ascii_characters_with_the_same_answer(text: str):
    assert response_module._mostly_latin(text) is _mostly_latin_by_name(text)
