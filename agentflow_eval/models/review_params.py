"""The review flow's parameters: which run's judges people check, on which sample of its
judged trials, and who answers.

Like the evaluate flow's (:mod:`agentflow_eval.models.request`), the flow takes them as
top-level parameters, so the Prefect UI renders a form; :class:`ReviewParams` holds them
together, and ``agentflow-eval review`` builds the same model from its flags.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from agentflow_eval.models.request import _at_least_one, _blank_is_none, _optional, _ui

__all__ = [
    "REVIEW_DEPLOYMENT",
    "ReviewCriteria",
    "ReviewDisagreeingFirst",
    "ReviewParams",
    "ReviewRun",
    "ReviewSeed",
    "ReviewSharedStorage",
    "ReviewSize",
    "ReviewWait",
    "ReviewWidth",
    "Reviewer",
]

REVIEW_DEPLOYMENT = "review/judges"
"""The review flow's deployment in prefect.yaml: what a run given ``review_sample``
starts."""


def _a_width(value: float | None) -> float | None:
    if value is not None and not 0 < value < 1:
        raise ValueError(f"must be an interval's width between 0 and 1, got {value:g}")
    return value


ReviewRun = Annotated[
    str,
    Field(min_length=1),
    _ui(
        "Run folder",
        "the finished run whose judges are checked: its folder, as the run printed it "
        "('results in ...'); the labels are written beside its results (labels.jsonl)",
    ),
]
ReviewSize = Annotated[
    int | None,
    BeforeValidator(lambda value: None if value in ("", 0) else _blank_is_none(value)),
    AfterValidator(_at_least_one),
    _optional("integer", minimum=0),
    _ui(
        "Trials to review",
        "how many judged trials to label, split between the judge's passes and fails; "
        "0: as many as Interval width needs (else every judged trial)",
        form_default=0,
    ),
]
ReviewWidth = Annotated[
    float | None,
    BeforeValidator(lambda value: None if value in ("", 0) else _blank_is_none(value)),
    AfterValidator(_a_width),
    _optional("number", minimum=0, maximum=1),
    _ui(
        "Interval width",
        "the width of the 95% interval on the judge's agreement the sample is sized for "
        "(e.g. 0.2 for ±10 points), when Trials to review is 0; 0: not sized by width",
        form_default=0,
    ),
]
ReviewCriteria = Annotated[
    list[str],
    _ui(
        "Criteria",
        "only these judged criteria (e.g. final_response_match_v2); empty: every LLM-judged "
        "criterion of the run",
    ),
]
ReviewDisagreeingFirst = Annotated[
    bool,
    _ui(
        "Disagreeing samples first",
        "first the trials where the judge's samples reached different verdicts",
    ),
]
Reviewer = Annotated[
    str | None,
    BeforeValidator(_blank_is_none),
    _optional("string"),
    _ui(
        "Reviewer",
        "who answers (each label records it; several reviewers may label the same trials, "
        "each in a review of their own); blank: the reviewer types a name in each form",
        form_default="",
    ),
]
ReviewWait = Annotated[
    float,
    Field(gt=0, le=30 * 24),
    _ui(
        "Wait for each answer (hours)",
        "how long the review waits at each trial for an answer; then it stops, Failed, "
        "keeping every label given (a new review of the run goes on from there)",
    ),
]
ReviewSharedStorage = Annotated[
    str | None,
    BeforeValidator(_blank_is_none),
    _optional("string"),
    _ui(
        "Shared storage (Prefect block)",
        "the storage block the pool's runs share (as the evaluate flow's Shared storage): "
        "each label goes to its label bank too, where later runs find it; blank: the bank "
        "of the output folder the run folder is in",
        form_default="",
    ),
]
ReviewSeed = Annotated[
    int,
    Field(ge=0),
    _ui(
        "Sample seed",
        "the same seed draws the same sample of the run, so a review stopped midway goes on "
        "with the trials it had left",
    ),
]


class ReviewParams(BaseModel):
    """A review of a run's judges: the same fields, titles and defaults as the review
    flow's parameters."""

    model_config = ConfigDict(extra="forbid")

    run: ReviewRun
    size: ReviewSize = None
    width: ReviewWidth = None
    criteria: ReviewCriteria = Field(default_factory=list)
    disagreeing_first: ReviewDisagreeingFirst = False
    reviewer: Reviewer = None
    wait_hours: ReviewWait = 24.0
    shared_storage: ReviewSharedStorage = None
    seed: ReviewSeed = 0

    def flow_parameters(self) -> dict[str, Any]:
        """These parameters as the review flow's keyword arguments."""
        return {name: getattr(self, name) for name in type(self).model_fields}

    @classmethod
    def from_flow_parameters(cls, values: dict[str, Any]) -> ReviewParams:
        """The review of a flow run, from the flow's keyword arguments."""
        return cls.model_validate({name: values[name] for name in cls.model_fields})
