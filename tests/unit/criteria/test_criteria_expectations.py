"""Case expectations: completes, calls_tool, final_contains."""

from __future__ import annotations

import pytest
from criteria_helpers import case, context, invocation, made, trial, turn

from agentflow_eval.criteria.expectations import (
    build_calls_tool,
    build_completes,
    build_final_contains,
)
from agentflow_eval.models.config import CriterionConfig, EvalConfig

ONE = case(invocation())


def completes():
    return build_completes("completes", CriterionConfig(), EvalConfig())


def calls(tool: str):
    return build_calls_tool("calls_tool", CriterionConfig(name=tool), EvalConfig())


def final_contains(text: str, case_sensitive: bool = True):
    options = CriterionConfig(text=text, case_sensitive=case_sensitive)
    return build_final_contains("final_contains", options, EvalConfig())


async def judge(criterion, tried):
    return await criterion.evaluate(context(ONE, tried))


def test_labels_read_like_the_scorecard_shows_them():
    assert completes().label == "completes"
    assert calls("session_note_append").label == "calls session_note_append"
    assert final_contains("7").label == 'final contains "7"'
    assert completes().threshold == calls("x").threshold == final_contains("7").threshold == 1.0


async def test_completes():
    done = await judge(completes(), trial(turn(final="hi")))
    assert (done.status, done.score) == ("passed", 1.0)
    crashed = await judge(completes(), trial(turn(final="hi"), error="boom"))
    assert (crashed.status, crashed.score) == ("failed", 0.0)
    assert crashed.reason == "the trial did not finish (exception: boom)"
    silent = await judge(completes(), trial(turn(final=None)))
    assert (silent.score, silent.reason) == (0.0, "the last turn has no final response")
    nothing = await judge(completes(), trial())
    assert nothing.score == 0.0


async def test_calls_tool_looks_at_every_turn():
    tried = trial(turn([made("search")]), turn([made("session_note_append", text="x")]))
    found = await judge(calls("session_note_append"), tried)
    assert (found.status, found.details["times_called"]) == ("passed", 1)
    assert found.details["tools_called"] == {"search": 1, "session_note_append": 1}
    missing = await judge(calls("session_note_search"), tried)
    assert missing.status == "failed"
    assert missing.reason == (
        "'session_note_search' was never called (tools called: search, session_note_append)"
    )
    none = await judge(calls("search"), trial(turn()))
    assert none.reason == "'search' was never called (tools called: none)"


async def test_calls_tool_counts_calls_made_before_an_error():
    tried = trial(turn([made("search")], final=None), error="crashed after the tool")
    assert (await judge(calls("search"), tried)).status == "passed"


def test_calls_tool_needs_a_name():
    with pytest.raises(ValueError, match="criterion 'calls_tool' needs 'name': the tool"):
        build_calls_tool("calls_tool", CriterionConfig(), EvalConfig())


async def test_final_contains_reads_the_answer():
    seven = final_contains("7")
    assert (await judge(seven, trial(turn(final="the answer is 7")))).status == "passed"
    six = await judge(seven, trial(turn(final="the answer is six")))
    assert (six.status, six.reason) == ("failed", "'7' not found in the final response")
    crashed = await judge(seven, trial(turn(final="the answer is 7"), error="max steps"))
    assert crashed.status == "failed"  # a failed run cannot satisfy a final-answer check
    assert crashed.reason == "the trial did not finish (exception: max steps)"


async def test_final_contains_uses_the_last_turn():
    tried = trial(turn(final="Paris"), turn(final="London"))
    assert (await judge(final_contains("Paris"), tried)).status == "failed"
    assert (await judge(final_contains("London"), tried)).status == "passed"


async def test_final_contains_case_sensitivity():
    tried = trial(turn(final="It is SUNNY in Tokyo"))
    assert (await judge(final_contains("sunny"), tried)).status == "failed"
    assert (await judge(final_contains("sunny", case_sensitive=False), tried)).status == "passed"
    eszett = await judge(final_contains("ß", case_sensitive=False), trial(turn(final="SS")))
    assert eszett.status == "passed"  # casefold, not just lower()


async def test_final_contains_with_no_final_response_fails():
    result = await judge(final_contains("x"), trial(turn(final=None)))
    assert (result.status, result.reason) == ("failed", "the last turn has no final response")


def test_final_contains_needs_text():
    with pytest.raises(ValueError, match=r"criterion 'final_contains' needs 'text'.*found none"):
        build_final_contains("final_contains", CriterionConfig(), EvalConfig())
    with pytest.raises(ValueError, match="found an empty string"):
        build_final_contains("final_contains", CriterionConfig(text=""), EvalConfig())


def test_thresholds_come_from_the_config():
    crit = build_completes("completes", CriterionConfig(threshold=0.0), EvalConfig())
    assert crit.threshold == 0.0
