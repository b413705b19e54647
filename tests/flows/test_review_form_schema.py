"""The review form as Prefect stores it for the UI: the trial's Markdown as the Resume
dialog's description, the verdict a pick-list of the item's answers (anything else
refused), the reviewer filled in when the review names one and asked for when not."""

from __future__ import annotations

import pytest
from prefect._internal.pydantic.v2_schema import create_v2_schema
from pydantic import ValidationError

from agentflow_eval.flows.support.review_form import answer_form


def _schema(form: type) -> dict:
    return create_v2_schema(form.__name__, model_base=form)  # what the UI renders


def test_the_form_offers_the_items_answers_and_its_description() -> None:
    form = answer_form("## 1 of 3", ("1", "2", "3", "4", "5", "skip"), "ann")
    schema = _schema(form)
    assert schema["properties"]["verdict"]["enum"] == ["1", "2", "3", "4", "5", "skip"]
    assert schema["properties"]["reviewer"]["default"] == "ann"
    assert schema["required"] == ["verdict"]
    assert form._description == "## 1 of 3"
    assert form(verdict="4").reviewer == "ann"
    with pytest.raises(ValidationError):
        form(verdict="pass")


def test_without_a_reviewer_named_the_form_asks_for_one() -> None:
    form = answer_form("## 1 of 3", ("pass", "fail", "skip"), None)
    assert set(_schema(form)["required"]) == {"verdict", "reviewer"}
    with pytest.raises(ValidationError):
        form(verdict="pass", reviewer="")
