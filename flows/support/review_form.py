"""The form a reviewer answers in the Prefect UI: the review flow pauses on each sampled
trial with :func:`answer_form` as ``wait_for_input``, and the UI's Resume dialog shows the
form's description (the trial, Markdown) above its fields.

The verdict's choices are the item's (pass or fail, or the rubric's scale, and skip),
a pick-list the server checks against when the form is sent: a form sent through the API
with another verdict is refused before the flow run resumes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import pydantic
from prefect.input import RunInput
from pydantic import Field

__all__ = ["ReviewAnswer", "answer_form"]


class ReviewAnswer(RunInput):
    """A reviewer's answer on one trial."""

    verdict: str
    note: str = ""
    reviewer: str


def answer_form(
    description: str, choices: Sequence[str], reviewer: str | None
) -> type[ReviewAnswer]:
    """The form for one trial: ``description`` above the fields, the verdict one of
    ``choices``, the reviewer's name filled in with ``reviewer`` (else typed in)."""
    verdict: Any = Literal.__getitem__(tuple(choices))  # the item's own pick-list
    named: Any = Field(
        reviewer if reviewer else ...,
        title="Reviewer",
        min_length=1,
        description="your name, recorded with the label",
    )
    form = pydantic.create_model(
        "ReviewAnswer",
        __base__=ReviewAnswer,
        verdict=(verdict, Field(title="Your verdict", description=" · ".join(choices))),
        note=(str, Field("", title="Note", description="why, if it helps the next reader")),
        reviewer=(str, named),
    )
    # what ``RunInput.with_initial_data`` sets: the Markdown the Resume dialog shows
    form._description = description
    return form
