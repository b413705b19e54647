"""Which judged trials a person reviews: a sample stratified by the judge's verdict, so
both the judge's sensitivity (its passes of what deserves a pass) and its specificity
(its fails of what deserves a fail) get labels, however rare one verdict is.

Each criterion is sampled on its own: its verdicts split into two strata, judged pass
and judged fail, and each stratum gets its share of the labels (half each, or what an
interval of the asked width needs in each; a stratum with fewer trials gives what it
has and the other takes the rest). Within a stratum the order is random (seeded: the same
plan for the same run and seed), with the trials whose judge samples disagreed first when
asked. Judged content already labelled (in this run, or for identical content in the
label bank) is never asked again, and identical content judged in several trials is
asked once.

The agreement figures (:mod:`agentflow_eval.review.agreement`) weight each stratum by
its share of the run's verdicts, so a sample that over-represents the rarer verdict
measures the judge without bias.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Sequence

from pydantic import BaseModel, ConfigDict, Field

from agentflow_eval.errors import InputError
from agentflow_eval.models.results import RunResult
from agentflow_eval.review.items import (
    JudgedVerdict,
    JudgeVerdict,
    ReviewItem,
    judged_criteria,
    judged_verdicts,
    review_item,
)

__all__ = [
    "CONFIDENCE",
    "DEFAULT_WIDTH",
    "ReviewItem",
    "ReviewPlan",
    "StratumCount",
    "labels_for_width",
    "plan_review",
]

CONFIDENCE = 0.95
"""The confidence of the intervals a plan is sized for."""
DEFAULT_WIDTH = 0.2
"""The interval width a plan aims at when neither a size nor a width is asked."""
_Z = 1.959963984540054  # the normal quantile of a two-sided 95% interval
_VERDICTS: tuple[JudgeVerdict, JudgeVerdict] = ("pass", "fail")


class StratumCount(BaseModel):
    """One criterion's verdicts of one kind, and how many of them the plan asks about."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    criterion: str
    """The criterion."""
    verdict: JudgeVerdict
    """The judge's verdict the stratum holds."""
    trials: int
    """Trials of the run the criterion gave this verdict."""
    labelled: int
    """Of those, trials whose judged content has a label already."""
    planned: int
    """Trials the plan asks a reviewer about."""
    needed: int
    """Labels this stratum needs for an interval of the plan's width."""


class ReviewPlan(BaseModel):
    """What a review asks, in the order to ask it, and how far it goes toward the asked
    precision."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    run_id: str
    """The run under review."""
    criteria: list[str]
    """The criteria reviewed."""
    items: list[ReviewItem]
    """The trials to label, in the order to ask them."""
    strata: list[StratumCount]
    """Each criterion's verdicts, by the judge's verdict, with what the plan asks of each."""
    width: float = Field(gt=0, le=1)
    """The width of the 95% interval the plan is measured against."""
    needed_per_stratum: int
    """Labels a stratum needs for that width at worst (an agreement of 50%), before a
    small stratum's finite-population correction."""
    needed_for_width: str
    """The sample size that width needs, and what this plan gives, in a sentence."""
    seed: int
    """The random seed the order was drawn with."""


def labels_for_width(width: float, population: int | None = None) -> int:
    """Labels a proportion needs for a 95% interval ``width`` wide (upper bound less
    lower) at worst, when the proportion is 50%: ``z² · ¼ / (width/2)²``, and, drawn
    without replacement from ``population`` trials, that with the finite-population
    correction (never more than the population)."""
    if not 0 < width <= 1:
        raise ValueError(f"an interval's width is within (0, 1], got {width}")
    needed = _Z * _Z * 0.25 / (width / 2) ** 2
    if population is not None:
        if population <= 0:
            return 0
        needed = needed / (1 + (needed - 1) / population)
    return math.ceil(needed - 1e-9)


def plan_review(
    run: RunResult,
    *,
    criteria: Sequence[str] | None = None,
    size: int | None = None,
    width: float | None = None,
    disagreeing_first: bool = False,
    already_labelled: Collection[str] = (),
    seed: int = 0,
) -> ReviewPlan:
    """The review of ``run``'s judged verdicts (``criteria``: those criteria, by default
    every criterion an LLM judge decided).

    ``size`` is the labels asked per criterion, split between its judged-pass and
    judged-fail trials; without it, each stratum is asked what a 95% interval ``width``
    wide needs (default :data:`DEFAULT_WIDTH`), less the labels it has. ``already_labelled``
    holds content keys with a label (this run's, the label bank's): never asked again.
    Refuses (:class:`~agentflow_eval.errors.InputError`) a criterion that gave the run
    no verdict, and a size below 1."""
    if size is not None and size < 1:
        raise InputError(f"a review's size is a number of labels, at least 1; got {size}")
    goal = DEFAULT_WIDTH if width is None else width
    if not 0 < goal <= 1:
        raise InputError(f"a review's interval width is within (0, 1]; got {goal}")
    names = _criteria_of(run, criteria)
    labelled = set(already_labelled)
    chosen: list[tuple[bool, float, JudgedVerdict]] = []
    strata: list[StratumCount] = []
    for name in names:
        groups = _strata(run, name)
        fresh = {verdict: _unlabelled(groups[verdict], labelled) for verdict in _VERDICTS}
        needed = {verdict: labels_for_width(goal, len(groups[verdict])) for verdict in _VERDICTS}
        has = {
            verdict: sum(1 for judged in groups[verdict] if judged.content_key in labelled)
            for verdict in _VERDICTS
        }
        if size is not None:
            wants = _split(size, {verdict: len(fresh[verdict]) for verdict in _VERDICTS})
        else:
            wants = {
                verdict: min(len(fresh[verdict]), max(0, needed[verdict] - has[verdict]))
                for verdict in _VERDICTS
            }
        for verdict in _VERDICTS:
            rng = random.Random(f"{seed}:{name}:{verdict}")
            pool = list(fresh[verdict])
            rng.shuffle(pool)
            if disagreeing_first:
                pool.sort(key=lambda judged: not judged.samples_disagreed)
            picked = pool[: wants[verdict]]
            order = random.Random(f"{seed}:{name}:{verdict}:order")
            chosen += [
                (disagreeing_first and judged.samples_disagreed, order.random(), judged)
                for judged in picked
            ]
            strata.append(
                StratumCount(
                    criterion=name,
                    verdict=verdict,
                    trials=len(groups[verdict]),
                    labelled=has[verdict],
                    planned=len(picked),
                    needed=needed[verdict],
                )
            )
    # the strata interleaved at random, so a reviewer does not meet every pass and then
    # every fail (and the disagreeing trials first, when asked)
    chosen.sort(key=lambda entry: (not entry[0], entry[1]))
    return ReviewPlan(
        run_id=run.run_id,
        criteria=names,
        items=[review_item(run, judged) for _, _, judged in chosen],
        strata=strata,
        width=goal,
        needed_per_stratum=labels_for_width(goal),
        needed_for_width=_sentence(goal, strata),
        seed=seed,
    )


def _criteria_of(run: RunResult, criteria: Sequence[str] | None) -> list[str]:
    if criteria is None:
        return judged_criteria(run)
    gave = {judged.result.criterion for judged in judged_verdicts(run)}
    for name in criteria:
        if name not in gave:
            known = ", ".join(sorted(gave)) or "none"
            raise InputError(
                f"criterion {name!r} gave run {run.run_id} no pass or fail to review "
                f"(criteria with verdicts: {known})"
            )
    return list(dict.fromkeys(criteria))


def _strata(run: RunResult, criterion: str) -> dict[JudgeVerdict, list[JudgedVerdict]]:
    groups: dict[JudgeVerdict, list[JudgedVerdict]] = {verdict: [] for verdict in _VERDICTS}
    for judged in judged_verdicts(run, [criterion]):
        groups[judged.verdict].append(judged)
    return groups


def _unlabelled(group: list[JudgedVerdict], labelled: set[str]) -> list[JudgedVerdict]:
    """The verdicts whose content has no label, identical content once (the first)."""
    seen: set[str] = set()
    out: list[JudgedVerdict] = []
    for judged in group:
        key = judged.content_key
        if key is not None and (key in labelled or key in seen):
            continue
        if key is not None:
            seen.add(key)
        out.append(judged)
    return out


def _split(size: int, available: dict[JudgeVerdict, int]) -> dict[JudgeVerdict, int]:
    """``size`` labels split evenly between the verdicts (an odd one to the rarer), a
    verdict with fewer trials giving what it has and the other the rest."""
    rare: JudgeVerdict = "fail" if available["fail"] <= available["pass"] else "pass"
    common: JudgeVerdict = "pass" if rare == "fail" else "fail"
    to_rare = min(available[rare], size - size // 2)
    to_common = min(available[common], size - to_rare)
    to_rare = min(available[rare], size - to_common)
    return {rare: to_rare, common: to_common}


def _sentence(width: float, strata: list[StratumCount]) -> str:
    needed = labels_for_width(width)
    planned = sum(stratum.planned for stratum in strata)
    parts = [
        f"{stratum.criterion} judged {stratum.verdict}: {stratum.planned} asked, "
        f"{stratum.labelled} labelled, {stratum.needed} needed of {stratum.trials}"
        for stratum in strata
    ]
    short = [stratum for stratum in strata if stratum.labelled + stratum.planned < stratum.needed]
    outcome = (
        "this plan reaches it"
        if not short
        else f"this plan falls short in {len(short)} of {len(strata)} strata"
    )
    return (
        f"A 95% interval {width:g} wide on the judge's agreement within each verdict needs "
        f"{needed} labels per verdict and criterion at worst (50% agreement; fewer where a "
        f"verdict has few trials); {planned} asked, {outcome} ({'; '.join(parts)})."
    )
