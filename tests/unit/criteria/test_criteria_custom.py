"""Custom criteria named as ``function: "module:attr"``."""

from __future__ import annotations

from pathlib import Path

import pytest
from criteria_helpers import case, context, invocation, trial, turn

from agentflow_eval.criteria.base import Criterion
from agentflow_eval.criteria.custom import FunctionCriterion, load_custom_criterion
from agentflow_eval.criteria.registry import build_criteria
from agentflow_eval.models.config import CriterionConfig, EvalConfig

TARGETS = "criteria_custom_targets"
ONE = case(invocation())


@pytest.fixture(autouse=True)
def _targets_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))


def load(attr: str, name: str = "my_check", **options) -> Criterion:
    config = CriterionConfig(function=f"{TARGETS}:{attr}", **options)
    return load_custom_criterion(name, config, EvalConfig())


async def judge(criterion: Criterion, answer: str | None = "a short answer"):
    return await criterion.evaluate(context(ONE, trial(turn(final=answer))))


# --- check functions ---------------------------------------------------------------------


async def test_a_bool_function_scores_one_or_zero_with_threshold_one():
    check = load("is_short")
    assert isinstance(check, FunctionCriterion)
    assert (check.name, check.label, check.threshold) == ("my_check", "my_check", 1.0)
    passed = await judge(check, "three words here")
    assert (passed.status, passed.score) == ("passed", 1.0)
    assert passed.details == {"function": "criteria_custom_targets:is_short"}
    failed = await judge(check, "one two three four five six")
    assert (failed.status, failed.score) == ("failed", 0.0)


async def test_options_are_passed_as_keyword_arguments():
    check = load("is_short", options={"max_words": 2})
    assert (await judge(check, "three words here")).status == "failed"
    assert (await judge(check, "two words")).status == "passed"


def test_an_option_the_function_does_not_take_is_an_error():
    with pytest.raises(
        ValueError,
        match=r"criterion 'my_check': check function 'criteria_custom_targets:is_short' "
        r"cannot be called as \(ctx, min_words=\.\.\.\)",
    ):
        load("is_short", options={"min_words": 2})
    with pytest.raises(ValueError, match=r"cannot be called as \(ctx\)"):
        load("needs_two")


async def test_an_async_function_returning_a_float_uses_the_default_threshold_one():
    check = load("three_quarters")
    result = await judge(check)
    assert (result.score, result.threshold, result.status) == (0.75, 1.0, "failed")
    lowered = await judge(load("three_quarters", threshold=0.7))
    assert (lowered.score, lowered.status) == (0.75, "passed")


async def test_a_score_and_reason_pair():
    result = await judge(load("with_reason", threshold=0.2))
    assert (result.score, result.status) == (0.25, "passed")
    assert result.reason == "only one of four facts"


async def test_a_criterion_result_is_kept_under_the_config_name():
    result = await judge(load("full_result", name="facts"))
    assert (result.criterion, result.label) == ("facts", "facts")
    assert (result.status, result.score, result.details) == ("passed", 0.9, {"facts": 9})


async def test_an_unusable_return_value_is_not_evaluated():
    text = await judge(load("returns_text"))
    assert text.status == "not_evaluated"
    assert text.reason == (
        "criteria_custom_targets:returns_text returned 'yes'; expected a bool, a score in "
        "[0, 1], a (score, reason) pair or a CriterionResult"
    )
    too_much = await judge(load("returns_too_much"))
    assert too_much.status == "not_evaluated"
    assert "returned 1.5" in too_much.reason


async def test_a_function_that_raises_is_not_evaluated():
    result = await judge(load("raises"))
    assert result.status == "not_evaluated"
    assert result.reason == (
        "criteria_custom_targets:raises raised RuntimeError: tool log unreadable"
    )


# --- factories ------------------------------------------------------------------------------


async def test_a_class_is_called_as_a_factory():
    crit = load("WordCount", name="wordy", options={"min_words": 3})
    assert (crit.name, crit.label, crit.threshold) == ("wordy", "at least 3 words", 1.0)
    assert (await judge(crit, "one two three")).status == "passed"
    assert (await judge(crit, "one two")).status == "failed"


async def test_a_three_argument_function_is_a_factory():
    crit = load("make_word_count", options={"min_words": 1}, threshold=0.5)
    assert type(crit).__name__ == "WordCount"
    assert crit.threshold == 0.5
    assert (await judge(crit, "hello")).status == "passed"


def test_a_factory_that_returns_no_criterion_is_an_error():
    with pytest.raises(
        ValueError,
        match=r"criterion 'my_check': 'criteria_custom_targets:bad_factory' returned a int; "
        r"expected a criterion",
    ):
        load("bad_factory")


def test_a_class_that_does_not_take_the_factory_arguments_is_an_error():
    with pytest.raises(
        ValueError, match=r"cannot be called as a factory \(name, options, config\)"
    ):
        load("NoArgs")


# --- naming the target ----------------------------------------------------------------------


def test_an_unimportable_module_names_the_criterion_and_target():
    options = CriterionConfig(function="no_such_module_here:check")
    with pytest.raises(
        ValueError,
        match=r"criterion 'polite': cannot import module 'no_such_module_here' "
        r"\(function 'no_such_module_here:check'\): ModuleNotFoundError",
    ):
        load_custom_criterion("polite", options, EvalConfig())


def test_a_missing_attribute_names_the_criterion_and_target():
    with pytest.raises(
        ValueError,
        match=r"criterion 'my_check': module 'criteria_custom_targets' has no attribute "
        r"'nope' \(function 'criteria_custom_targets:nope'\)",
    ):
        load("nope")


async def test_a_dotted_attribute_is_followed():
    crit = load("Checks.always_passes")
    assert (await judge(crit)).status == "passed"


def test_a_malformed_spec_or_a_non_callable_is_an_error():
    with pytest.raises(ValueError, match=r"function 'just_a_module' should look like"):
        load_custom_criterion("c", CriterionConfig(function="just_a_module"), EvalConfig())
    with pytest.raises(ValueError, match=r"'criteria_custom_targets:NOT_CALLABLE' is a int"):
        load("NOT_CALLABLE")


# --- through the registry -------------------------------------------------------------------


async def test_build_criteria_loads_a_function_entry():
    config = EvalConfig.model_validate(
        {
            "criteria": {
                "short_answer": {
                    "function": f"{TARGETS}:is_short",
                    "options": {"max_words": 3},
                }
            }
        }
    )
    (crit,) = build_criteria(config, ONE)
    assert crit.name == "short_answer"
    assert (await judge(crit, "yes indeed")).status == "passed"


# --- a file of one's own, as agents are named ---------------------------------------------


async def test_a_file_path_spec_loads_the_check_from_that_file(tmp_path, monkeypatch):
    checks = tmp_path / "my checks" / "checks.py"
    checks.parent.mkdir()
    checks.write_text(
        "def mentions_city(ctx, city='Paris'):\n"
        "    answer = ctx.trial.final_response or ''\n"
        "    return city in answer, f'looked for {city}'\n"
    )
    monkeypatch.chdir(tmp_path)
    config = CriterionConfig(function="my checks/checks.py:mentions_city", options={"city": "Rome"})
    check = load_custom_criterion("city", config, EvalConfig())
    passed = await judge(check, "Rome is sunny")
    assert (passed.status, passed.reason) == ("passed", "looked for Rome")
    assert (await judge(check, "Paris is sunny")).status == "failed"
    absolute = CriterionConfig(function=f"{checks}:mentions_city")  # an absolute path, anywhere
    assert (await judge(load_custom_criterion("c", absolute, EvalConfig()), "Paris")).passed


def test_a_missing_check_file_names_the_file_and_where_it_was_looked_for(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        ValueError,
        match=rf"criterion 'c': function 'checks.py:fn': file 'checks.py' does not exist "
        rf"\(relative paths are read from {tmp_path}\)",
    ):
        load_custom_criterion("c", CriterionConfig(function="checks.py:fn"), EvalConfig())


def test_a_check_file_that_fails_to_import_names_the_error(tmp_path, monkeypatch):
    (tmp_path / "broken.py").write_text("import no_such_dependency_here\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"cannot import module 'broken.py'.*ModuleNotFoundError"):
        load_custom_criterion("c", CriterionConfig(function="broken.py:fn"), EvalConfig())
