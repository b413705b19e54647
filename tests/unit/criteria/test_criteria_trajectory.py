"""tool_trajectory_avg_score: match types, partial credit, argument modes, invocations."""

from __future__ import annotations

import pytest
from criteria_helpers import case, context, expect, invocation, made, scenario_case, trial, turn

from agentflow_eval.criteria.trajectory import (
    CallMatcher,
    ToolTrajectoryCriterion,
    TrajectoryOptions,
    align_any_order,
    align_exact,
    align_in_order,
    build_tool_trajectory,
    match_invocation,
)
from agentflow_eval.models.config import CriterionConfig, EvalConfig

# The weather example's second case: "Compare the weather in Tokyo and London".
TOKYO_LONDON = [expect("get_weather", location="Tokyo"), expect("get_weather", location="London")]


def score(expected, actual, match_type, **options) -> float:
    return match_invocation(expected, actual, match_type=match_type, **options).score


def criterion(**options) -> ToolTrajectoryCriterion:
    return build_tool_trajectory(
        "tool_trajectory_avg_score", CriterionConfig(**options), EvalConfig()
    )


# --- worked examples under each match type --------------------------------------------


@pytest.mark.parametrize(
    ("actual", "exact", "in_order", "any_order"),
    [
        pytest.param(
            [made("get_weather", location="Tokyo"), made("get_weather", location="London")],
            1.0,
            1.0,
            1.0,
            id="same",
        ),
        pytest.param(
            [
                made("get_weather", location="Tokyo"),
                made("search", q="london"),
                made("get_weather", location="London"),
            ],
            0.0,  # EXACT: three calls where two were expected
            1.0,
            1.0,
            id="extras",
        ),
        pytest.param(
            [made("get_weather", location="London"), made("get_weather", location="Tokyo")],
            0.0,  # neither position matches
            0.5,  # only one of the two can be found in order
            1.0,
            id="wrong-order",
        ),
        pytest.param(
            [made("get_weather", location="Tokyo"), made("get_weather", location="Paris")],
            0.5,
            0.5,
            0.5,
            id="wrong-args",
        ),
        pytest.param([made("get_weather", location="Tokyo")], 0.0, 0.5, 0.5, id="missing"),
        pytest.param([], 0.0, 0.0, 0.0, id="no-calls"),
    ],
)
def test_worked_examples_partial_credit(actual, exact, in_order, any_order):
    assert score(TOKYO_LONDON, actual, "EXACT") == exact
    assert score(TOKYO_LONDON, actual, "IN_ORDER") == in_order
    assert score(TOKYO_LONDON, actual, "ANY_ORDER") == any_order


@pytest.mark.parametrize("match_type", ["EXACT", "IN_ORDER", "ANY_ORDER"])
def test_all_or_nothing_is_one_only_for_a_full_match(match_type):
    wrong_args = [made("get_weather", location="Tokyo"), made("get_weather", location="Paris")]
    full = [made("get_weather", location="Tokyo"), made("get_weather", location="London")]
    assert score(TOKYO_LONDON, wrong_args, match_type) == 0.5
    assert score(TOKYO_LONDON, wrong_args, match_type, scoring="all_or_nothing") == 0.0
    assert score(TOKYO_LONDON, full, match_type, scoring="all_or_nothing") == 1.0


def test_all_or_nothing_follows_the_match_type_on_extras_and_order():
    extras = [
        made("get_weather", location="Tokyo"),
        made("x"),
        made("get_weather", location="London"),
    ]
    swapped = [made("get_weather", location="London"), made("get_weather", location="Tokyo")]
    aon = {"scoring": "all_or_nothing"}
    assert score(TOKYO_LONDON, extras, "EXACT", **aon) == 0.0
    assert score(TOKYO_LONDON, extras, "IN_ORDER", **aon) == 1.0
    assert score(TOKYO_LONDON, swapped, "IN_ORDER", **aon) == 0.0
    assert score(TOKYO_LONDON, swapped, "ANY_ORDER", **aon) == 1.0


def test_exact_partial_credit_is_the_fraction_of_matching_positions():
    expected = [expect("a"), expect("b"), expect("c"), expect("d")]
    actual = [made("a"), made("x"), made("c"), made("y")]
    result = match_invocation(expected, actual, match_type="EXACT")
    assert result.score == 0.5
    assert result.matched == [0, None, 2, None]


def test_in_order_credits_the_longest_ordered_run_not_just_a_prefix():
    # A greedy scan would stop at the missing first call and score 0.
    expected = [expect("a"), expect("b"), expect("c")]
    result = match_invocation(expected, [made("b"), made("c")], match_type="IN_ORDER")
    assert result.score == pytest.approx(2 / 3)
    assert result.matched == [None, 0, 1]


def test_in_order_skips_extra_calls_between_expected_ones():
    expected = [expect("a"), expect("b")]
    actual = [made("x"), made("a"), made("x"), made("x"), made("b")]
    assert align_in_order(expected, actual, CallMatcher()) == [1, 4]


def test_in_order_matches_repeated_calls_to_distinct_positions():
    expected = [expect("a"), expect("a")]
    assert align_in_order(expected, [made("a")], CallMatcher()) == [0, None]
    assert align_in_order(expected, [made("a"), made("b"), made("a")], CallMatcher()) == [0, 2]


def test_any_order_uses_each_actual_call_once():
    expected = [expect("a"), expect("a")]
    result = match_invocation(expected, [made("a")], match_type="ANY_ORDER")
    assert result.score == 0.5
    assert result.matched == [0, None]


def test_any_order_finds_the_best_assignment_not_the_first_one():
    # Under subset args the first expected call would fit either actual call; a greedy
    # first-fit takes f(x=1) and leaves nothing for the stricter second expectation.
    expected = [expect("f"), expect("f", x=1)]
    actual = [made("f", x=1), made("f", x=2)]
    matcher = CallMatcher(args_match="subset")
    assert align_any_order(expected, actual, matcher) == [1, 0]
    assert score(expected, actual, "ANY_ORDER", matcher=matcher) == 1.0


def test_exact_alignment_is_positional():
    expected = [expect("a"), expect("b")]
    assert align_exact(expected, [made("b"), made("b"), made("c")], CallMatcher()) == [None, 1]


@pytest.mark.parametrize(
    ("match_type", "with_calls"),
    [("EXACT", 0.0), ("IN_ORDER", 1.0), ("ANY_ORDER", 1.0)],
)
def test_no_expected_calls(match_type, with_calls):
    assert score([], [], match_type) == 1.0
    assert score([], [made("surprise")], match_type) == with_calls


def test_exact_length_mismatch_is_explained():
    result = match_invocation(TOKYO_LONDON, [made("get_weather", location="Tokyo")])
    assert result.note == "EXACT needs 2 call(s), the agent made 1"


# --- argument modes ----------------------------------------------------------------------


def test_args_exact_is_deep_equality():
    expected = [expect("q", filters={"tags": ["a", "b"]}, limit=5)]
    assert score(expected, [made("q", filters={"tags": ["a", "b"]}, limit=5)], "EXACT") == 1.0
    assert score(expected, [made("q", filters={"tags": ["b", "a"]}, limit=5)], "EXACT") == 0.0
    assert score(expected, [made("q", filters={"tags": ["a", "b"]}, limit="5")], "EXACT") == 0.0
    assert score(expected, [made("q", filters={"tags": ["a", "b"]})], "EXACT") == 0.0


def test_args_ignore_compares_names_only():
    matcher = CallMatcher(args_match="ignore")
    names_only = [made("get_weather"), made("get_weather", x=1)]
    assert score(TOKYO_LONDON, names_only, "EXACT", matcher=matcher) == 1.0
    other_tool = [made("get_weather"), made("get_time")]
    assert score(TOKYO_LONDON, other_tool, "EXACT", matcher=matcher) == 0.5


def test_args_subset_allows_extra_arguments_but_not_different_values():
    matcher = CallMatcher(args_match="subset")
    expected = [expect("get_weather", location="Tokyo")]
    extra = [made("get_weather", location="Tokyo", units="C")]
    assert score(expected, extra, "EXACT", matcher=matcher) == 1.0
    assert score(expected, extra, "EXACT") == 0.0  # exact (the default) rejects the extra
    other = [made("get_weather", location="Paris", units="C")]
    assert score(expected, other, "EXACT", matcher=matcher) == 0.0
    missing = [made("get_weather", units="C")]
    assert score(expected, missing, "EXACT", matcher=matcher) == 0.0


def test_tool_args_match_overrides_the_mode_per_tool():
    expected = [expect("search", q="weather tokyo"), expect("get_weather", location="Tokyo")]
    actual = [made("search", q="tokyo forecast"), made("get_weather", location="Tokyo", units="C")]
    per_tool = CallMatcher(args_match="exact", tool_args_match={"search": "ignore"})
    result = match_invocation(expected, actual, match_type="EXACT", matcher=per_tool)
    assert result.matched == [0, None]  # search's args ignored, get_weather's compared exactly
    both = CallMatcher(args_match="subset", tool_args_match={"search": "ignore"})
    assert score(expected, actual, "EXACT", matcher=both) == 1.0


def test_a_bad_args_mode_lists_the_allowed_ones():
    allowed = r"unknown args match mode 'fuzzy'; expected one of exact, ignore, subset"
    with pytest.raises(ValueError, match=allowed):
        CallMatcher(args_match="fuzzy")
    with pytest.raises(ValueError, match=r"tool_args_match\['search'\]: unknown args match mode"):
        CallMatcher(tool_args_match={"search": "loose"})


def test_a_bad_match_type_or_scoring_lists_the_allowed_ones():
    with pytest.raises(ValueError, match="expected one of EXACT, IN_ORDER, ANY_ORDER"):
        match_invocation([], [], match_type="SOMETIMES")
    with pytest.raises(ValueError, match="expected one of partial, all_or_nothing"):
        match_invocation([], [], scoring="most")
    with pytest.raises(ValueError, match="unknown match type 'FUZZY'"):
        ToolTrajectoryCriterion(name="t", threshold=1.0, match_type="FUZZY")


def test_the_options_validate_modes_too():
    with pytest.raises(ValueError, match="args_match"):
        TrajectoryOptions.model_validate({"args_match": "fuzzy"})
    with pytest.raises(ValueError, match="args_match"):  # an entry as written, when built
        build_tool_trajectory(
            "tool_trajectory_avg_score", CriterionConfig(args_match="fuzzy"), EvalConfig()
        )
    config = CriterionConfig.model_validate({"match_type": "in_order", "args_match": "SUBSET"})
    built = build_tool_trajectory("tool_trajectory_avg_score", config, EvalConfig())
    assert (built.match_type, built.matcher.args_match) == ("IN_ORDER", "subset")


# --- the criterion over a trial ---------------------------------------------------------


def two_invocation_case():
    return case(
        invocation([expect("get_weather", location="Tokyo")]),
        invocation(TOKYO_LONDON),
    )


async def test_score_is_the_mean_over_invocations():
    tried = trial(
        turn([made("get_weather", location="Tokyo")]),
        turn([made("get_weather", location="Tokyo"), made("get_weather", location="Paris")]),
    )
    result = await criterion().evaluate(context(two_invocation_case(), tried))
    assert result.score == pytest.approx(0.75)
    assert result.status == "failed"
    assert result.threshold == 1.0
    rows = result.details["invocations"]
    assert [row["score"] for row in rows] == [1.0, 0.5]
    assert rows[1]["expected"] == [
        {"name": "get_weather", "args": {"location": "Tokyo"}},
        {"name": "get_weather", "args": {"location": "London"}},
    ]
    assert rows[1]["actual"][1] == {"name": "get_weather", "args": {"location": "Paris"}}
    assert rows[1]["matched"] == [0, None]
    assert result.reason == "invocation 2: 1/2 expected call(s) matched among 2 made"


async def test_a_missing_turn_scores_zero_for_its_invocation():
    tried = trial(turn([made("get_weather", location="Tokyo")]), error="agent crashed")
    result = await criterion().evaluate(context(two_invocation_case(), tried))
    assert result.score == 0.5
    first, second = result.details["invocations"]
    assert (first["missing_turn"], second["missing_turn"]) == (False, True)
    assert second["actual"] == [] and second["matched"] == [None, None]
    assert "invocation 2: no turn recorded" in result.reason


async def test_a_trial_with_no_turns_scores_zero():
    result = await criterion().evaluate(context(two_invocation_case(), trial(error="boom")))
    assert result.score == 0.0
    assert result.status == "failed"


async def test_passes_at_the_threshold_and_reports_options():
    extra_first = [made("x"), *(made(c.name, **c.args) for c in TOKYO_LONDON)]
    tried = trial(turn([made("get_weather", location="Tokyo")]), turn(extra_first))
    crit = criterion(match_type="IN_ORDER", threshold=0.9)
    result = await crit.evaluate(context(two_invocation_case(), tried))
    assert (result.status, result.score, result.reason) == ("passed", 1.0, None)
    assert result.label == "trajectory IN_ORDER"
    assert result.details["match_type"] == "IN_ORDER"
    assert result.details["scoring"] == "partial"
    assert result.details["invocations"][1]["matched"] == [1, 2]
    result.model_dump_json()  # the details are JSON


async def test_all_or_nothing_scoring_through_the_config():
    tried = trial(
        turn([made("get_weather", location="Tokyo")]),
        turn([made("get_weather", location="Tokyo"), made("get_weather", location="Paris")]),
    )
    crit = criterion(scoring="all_or_nothing")
    result = await crit.evaluate(context(two_invocation_case(), tried))
    assert result.score == 0.5  # 1.0 and 0.0
    assert result.label == "trajectory EXACT, all-or-nothing"


async def test_per_tool_args_through_the_config():
    tried = trial(turn([made("get_weather", location="tokyo, JP")]))
    one = case(invocation([expect("get_weather", location="Tokyo")]))
    strict = await criterion().evaluate(context(one, tried))
    loose = await criterion(tool_args_match={"get_weather": "ignore"}).evaluate(context(one, tried))
    assert (strict.score, loose.score) == (0.0, 1.0)
    assert loose.details["tool_args_match"] == {"get_weather": "ignore"}
    assert criterion(args_match="subset").label == "trajectory EXACT, args subset"


async def test_a_conversation_scenario_case_is_skipped():
    result = await criterion().evaluate(context(scenario_case(), trial(turn())))
    assert result.status == "skipped"
    assert result.score is None
    assert "conversation_scenario" in result.reason
