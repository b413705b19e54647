"""How far a run's judges agree with people, per judged criterion, from the labels of
some of its verdicts.

**Which labels count.** A label counts for every verdict of its criterion on the same
judged content (its content key: identical content judged in another trial, another run
or a re-judge of this one), or, for a criterion that records no content key, for its
own trial of this run. A trial's human verdict is the majority of its reviewers' latest
labels (a scale label passes at the criterion's threshold); a tie gives none.

**Strata and weights.** Labels come from a sample stratified by the judge's verdict
(:mod:`~agentflow_eval.review.sampling`), which over-represents the rarer verdict on
purpose. Every figure is therefore estimated over the strata of the run's verdicts,
each weighted by its share of the run: the judge's verdict (pass, fail) and, within it,
whether the judge's samples disagreed (a review that asks disagreeing trials first
over-represents those as well). Within a stratum the labelled trials stand for the
rest. With ``W_h`` a stratum's share of the run's verdicts and ``p_h`` the share of its
labelled trials people passed, the run's verdicts fall into the cells

    a = Σ_{judge pass} W_h·p_h     b = Σ_{judge pass} W_h·(1 − p_h)
    c = Σ_{judge fail} W_h·p_h     d = Σ_{judge fail} W_h·(1 − p_h)

and agreement is ``a + d``, sensitivity (of what people pass, the share the judge
passes) ``a / (a + c)``, specificity ``d / (b + d)``, Cohen's κ that of the table
(a, b, c, d). A stratum with trials but no labels is pooled with the other stratum of
the same judge's verdict (a note says so); a judge's verdict with no labels at all leaves
the figures unmeasured.

**Intervals.** A parametric bootstrap draws each stratum's ``p_h`` from its
Beta(k + ½, n − k + ½) (Jeffreys) distribution (seeded: the same labels give the same
figures). Agreement, sensitivity and specificity: the Wilson score interval at the
estimate's effective sample size, ``p(1 − p) / Var``, with ``Var`` by the delta method
over the strata's binomial variances (each stratum's share shrunk half a label toward
½, so a stratum all of one verdict still counts as uncertain; where the estimate is 0
or 1, the labels it rests on), widened to the draws' 2.5th and 97.5th percentiles where
they reach further: a ratio whose cells are rare (specificity when people fail few
trials) is skewed, and the delta method alone covered it 87% of the time in simulation
against 98% so widened. κ and the corrected pass rate: the draws' percentiles.

**The corrected pass rate.** The criterion's raw pass rate ``q = a + b`` is what the
judge says; Rogan–Gladen corrects it for the judge's measured error:
``(q + sp − 1) / (se + sp − 1)``, clipped to [0, 1] (on this run's own labels it equals
the stratified estimate ``a + c`` of the share people would pass). Like the raw rate's
Wilson interval, its interval is about the agent's pass rate, so it takes in the trials'
sampling too: each bootstrap draw also draws the strata's shares from a Dirichlet
(N_h + ½) distribution over the run's verdicts, and the correction is applied to each
draw's raw rate, sensitivity and specificity.

**Reviewers against each other.** For each pair of reviewers who labelled at least two
of the same trials: their share of equal verdicts and Cohen's κ, its interval by a
bootstrap over those trials.
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from agentflow_eval.models.agreement import (
    AgreementStratum,
    Estimate,
    JudgeAgreement,
    ReviewerAgreement,
)
from agentflow_eval.review.estimates import cohens_kappa, rogan_gladen, wilson
from agentflow_eval.review.labels import Label
from agentflow_eval.review.verdicts import VerdictRecord

__all__ = ["DRAWS", "judge_agreement"]

DRAWS = 4000
"""Bootstrap draws per interval."""

Floats = NDArray[np.float64]
StratumKey = tuple[bool, bool]
"""(the judge passed, its samples disagreed)."""


@dataclass
class _Judged:
    """A verdict and its reviewers' latest labels."""

    record: VerdictRecord
    latest: dict[str, Label] = field(default_factory=dict)

    def take(self, label: Label) -> None:
        earlier = self.latest.get(label.reviewer)
        if earlier is None or label.labelled_at >= earlier.labelled_at:
            self.latest[label.reviewer] = label

    def human(self) -> bool | None:
        """The people's verdict: the majority of the reviewers; None on a tie or with
        no labels."""
        votes = [label.passes(self.record.threshold) for label in self.latest.values()]
        yes, no = sum(votes), len(votes) - sum(votes)
        return None if yes == no else yes > no


@dataclass
class _Stratum:
    judge_passed: bool
    trials: int = 0
    labelled: int = 0
    human_pass: int = 0

    def merged(self, other: _Stratum) -> _Stratum:
        return _Stratum(
            self.judge_passed,
            self.trials + other.trials,
            self.labelled + other.labelled,
            self.human_pass + other.human_pass,
        )


def judge_agreement(
    verdicts: Iterable[VerdictRecord],
    labels: Sequence[Label],
    *,
    run_ids: Collection[str],
    min_agreement: float | None = None,
    draws: int = DRAWS,
    seed: int = 0,
) -> list[JudgeAgreement]:
    """The agreement of each criterion of ``verdicts`` that ``labels`` label (see the
    module), in the order the criteria are first met. ``run_ids`` are the runs whose
    trials these are (the run, and the run it re-judged): a label without a content key
    counts only for its own trial of one of them. ``min_agreement`` marks a judge whose
    agreement falls below it untrustworthy."""
    by_criterion: dict[str, list[_Judged]] = {}
    by_content: dict[tuple[str, str], list[_Judged]] = {}
    by_trial: dict[tuple[str, int, str], _Judged] = {}
    for record in verdicts:
        judged = _Judged(record)
        by_criterion.setdefault(record.criterion, []).append(judged)
        by_trial[record.key] = judged
        if record.content_key is not None:
            by_content.setdefault((record.criterion, record.content_key), []).append(judged)
    unmatched: dict[str, int] = {}
    matched: dict[str, int] = {}
    for label in labels:
        targets: list[_Judged] = []
        if label.content_key is not None:
            targets = by_content.get((label.criterion, label.content_key), [])
        elif label.run_id in run_ids:
            own = by_trial.get((label.case_id, label.trial, label.criterion))
            if own is not None and own.record.content_key is None:
                targets = [own]
        for judged in targets:
            judged.take(label)
        counter = matched if targets else unmatched
        counter[label.criterion] = counter.get(label.criterion, 0) + 1
    out = []
    for criterion, trials in by_criterion.items():
        if not matched.get(criterion):
            continue
        rng = np.random.default_rng([seed, zlib.crc32(criterion.encode())])
        agreement = _criterion_agreement(criterion, trials, rng, draws)
        if unmatched.get(criterion):
            agreement.notes.append(
                f"{unmatched[criterion]} label(s) of {criterion} match no verdict of this run "
                "(the judged content differs: another answer, prompt or threshold)"
            )
        if min_agreement is not None:
            agreement.min_agreement = min_agreement
            agreement.untrustworthy = (
                agreement.agreement is not None and agreement.agreement.value < min_agreement
            )
        out.append(agreement)
    return out


def _criterion_agreement(
    criterion: str, trials: list[_Judged], rng: np.random.Generator, draws: int
) -> JudgeAgreement:
    strata: dict[StratumKey, _Stratum] = {}
    reviewers: set[str] = set()
    labelled = tied = labels = 0
    for judged in trials:
        record = judged.record
        key = (record.passed, record.samples_disagreed)
        stratum = strata.setdefault(key, _Stratum(record.passed))
        stratum.trials += 1
        if not judged.latest:
            continue
        labels += len(judged.latest)
        reviewers.update(judged.latest)
        human = judged.human()
        if human is None:
            tied += 1
            continue
        labelled += 1
        stratum.labelled += 1
        stratum.human_pass += human
    verdicts = len(trials)
    judge_passes = sum(1 for judged in trials if judged.record.passed)
    raw = judge_passes / verdicts
    result = JudgeAgreement(
        criterion=criterion,
        label=trials[0].record.label,
        verdicts=verdicts,
        labelled_trials=labelled,
        labels=labels,
        reviewers=sorted(reviewers),
        tied_trials=tied,
        strata=[
            AgreementStratum(
                verdict="pass" if passed else "fail",
                samples_disagreed=disagreed,
                trials=stratum.trials,
                labelled=stratum.labelled,
                human_pass=stratum.human_pass,
            )
            for (passed, disagreed), stratum in sorted(strata.items(), reverse=True)
        ],
        raw_pass_rate=Estimate(
            value=raw, low=wilson(raw, verdicts)[0], high=wilson(raw, verdicts)[1]
        ),
        between_reviewers=_between_reviewers(trials, rng, draws),
    )
    pooled = _pooled(strata, result.notes)
    if pooled is not None:
        _measure(result, pooled, verdicts, rng, draws)
    if tied:
        result.notes.append(f"{tied} trial(s) whose reviewers split evenly are left out")
    return result


def _pooled(strata: dict[StratumKey, _Stratum], notes: list[str]) -> list[_Stratum] | None:
    """The strata to estimate over: a stratum without labels pooled with the other of its
    judge's verdict; None when a judge's verdict that occurs has no labels at all."""
    pooled: list[_Stratum] = []
    for passed in (True, False):
        verdict = "pass" if passed else "fail"
        parts = [strata[(passed, flag)] for flag in (True, False) if (passed, flag) in strata]
        if not parts:
            continue
        if not any(part.labelled for part in parts):
            notes.append(
                f"no labels yet on the judge's {verdict} verdicts: agreement, sensitivity, "
                "specificity, κ and the corrected pass rate need labels on both"
            )
            return None
        if all(part.labelled for part in parts):
            pooled += parts
            continue
        merged = parts[0].merged(parts[1])
        notes.append(
            f"the judge's {verdict} verdicts whose samples "
            f"{'agreed' if parts[1].labelled == 0 else 'disagreed'} have no labels: "
            f"weighted with the rest of its {verdict} verdicts (an estimate that leans on "
            "the labelled kind)"
        )
        pooled.append(merged)
    return pooled


@dataclass(frozen=True)
class _Cells:
    """The run's verdicts as shares of the 2×2 table judge × people (arrays: one entry
    per bootstrap draw, or one)."""

    a: Floats  # judge pass, people pass
    b: Floats  # judge pass, people fail
    c: Floats  # judge fail, people pass
    d: Floats  # judge fail, people fail

    @classmethod
    def of(cls, weights: Floats, shares: Floats, judge_pass: NDArray[np.bool_]) -> _Cells:
        """``weights``, ``shares``: (draws, strata) arrays."""
        passing = weights * shares
        failing = weights * (1 - shares)
        return cls(
            a=(passing * judge_pass).sum(axis=-1),
            b=(failing * judge_pass).sum(axis=-1),
            c=(passing * ~judge_pass).sum(axis=-1),
            d=(failing * ~judge_pass).sum(axis=-1),
        )

    def kappa(self) -> Floats:
        observed = self.a + self.d
        judge = self.a + self.b
        people = self.a + self.c
        chance = judge * people + (1 - judge) * (1 - people)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(chance < 1, (observed - chance) / (1 - chance), np.nan)

    def sensitivity(self) -> Floats:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.a / (self.a + self.c)

    def specificity(self) -> Floats:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.d / (self.b + self.d)

    def corrected(self) -> Floats:
        return np.asarray(rogan_gladen(self.a + self.b, self.sensitivity(), self.specificity()))


def _measure(
    result: JudgeAgreement,
    strata: list[_Stratum],
    verdicts: int,
    rng: np.random.Generator,
    draws: int,
) -> None:
    trials = np.array([s.trials for s in strata], dtype=np.float64)
    n = np.array([s.labelled for s in strata], dtype=np.float64)
    k = np.array([s.human_pass for s in strata], dtype=np.float64)
    judge_pass = np.array([s.judge_passed for s in strata], dtype=np.bool_)
    weights = trials / verdicts
    shares = k / n
    # a stratum's variance with its share shrunk half a label toward ½: never 0
    shrunk = (k + 0.5) / (n + 1)
    variances = shrunk * (1 - shrunk) / n
    cells = _Cells.of(weights, shares, judge_pass)
    a, b, c, d = (float(x) for x in (cells.a, cells.b, cells.c, cells.d))

    drawn = rng.beta(k + 0.5, n - k + 0.5, size=(draws, len(strata)))
    spread = _Cells.of(weights, drawn, judge_pass)
    sign = np.where(judge_pass, 1.0, -1.0)
    result.agreement = _widened(
        _wilson_estimate(a + d, weights * sign, variances, int(n.sum())), spread.a + spread.d
    )
    people_pass = a + c
    if people_pass > 0:
        gradient = np.where(judge_pass, weights * c, -weights * a) / people_pass**2
        labelled_pass = sum(s.human_pass for s in strata)
        result.sensitivity = _widened(
            _wilson_estimate(a / people_pass, gradient, variances, labelled_pass),
            spread.sensitivity(),
        )
    people_fail = b + d
    if people_fail > 0:
        gradient = np.where(judge_pass, weights * d, -weights * b) / people_fail**2
        labelled_fail = sum(s.labelled - s.human_pass for s in strata)
        result.specificity = _widened(
            _wilson_estimate(d / people_fail, gradient, variances, labelled_fail),
            spread.specificity(),
        )

    kappa = float(cells.kappa())
    if math.isfinite(kappa):
        result.kappa = _percentile_estimate(kappa, spread.kappa())
    if result.sensitivity is not None and result.specificity is not None:
        corrected = float(rogan_gladen(a + b, result.sensitivity.value, result.specificity.value))
        if math.isfinite(corrected):
            mixes = rng.dirichlet(trials + 0.5, size=draws)
            rates = _Cells.of(mixes, drawn, judge_pass).corrected()
            result.corrected_pass_rate = _percentile_estimate(corrected, rates)
        else:
            result.notes.append(
                "the judge is no better than chance here (sensitivity + specificity ≤ 1): "
                "its pass rate cannot be corrected"
            )


def _wilson_estimate(value: float, gradient: Floats, variances: Floats, labels: int) -> Estimate:
    """``value`` with the Wilson interval at its effective sample size (the delta
    method's variance from ``gradient``), or at ``labels`` where that is undefined."""
    value = min(1.0, max(0.0, value))
    variance = float((gradient**2 * variances).sum())
    spread = value * (1 - value)
    n = spread / variance if spread > 0 and variance > 0 else float(labels)
    low, high = wilson(value, n)
    return Estimate(value=value, low=min(low, value), high=max(high, value))


def _widened(estimate: Estimate, draws: Floats) -> Estimate:
    """``estimate``'s interval, reaching as far as the draws' 2.5th and 97.5th
    percentiles where they reach further (a ratio of a rare cell is skewed: the delta
    method's symmetric variance understates it)."""
    spread = _percentile_estimate(estimate.value, draws)
    return Estimate(
        value=estimate.value,
        low=min(estimate.low, spread.low),
        high=max(estimate.high, spread.high),
    )


def _percentile_estimate(value: float, draws: Floats) -> Estimate:
    """``value`` with the 2.5th and 97.5th percentiles of the finite ``draws``."""
    finite = draws[np.isfinite(draws)]
    if finite.size == 0:
        return Estimate(value=value, low=value, high=value)
    low, high = (float(x) for x in np.percentile(finite, [2.5, 97.5]))
    return Estimate(value=value, low=min(low, value), high=max(high, value))


def _between_reviewers(
    trials: list[_Judged], rng: np.random.Generator, draws: int
) -> list[ReviewerAgreement]:
    """Each pair of reviewers over the trials both labelled (two or more)."""
    names = sorted({reviewer for judged in trials for reviewer in judged.latest})
    out = []
    for first, second in itertools.combinations(names, 2):
        pairs = [
            (
                judged.latest[first].passes(judged.record.threshold),
                judged.latest[second].passes(judged.record.threshold),
            )
            for judged in trials
            if first in judged.latest and second in judged.latest
        ]
        if len(pairs) < 2:
            continue
        x = np.array([p[0] for p in pairs], dtype=np.bool_)
        y = np.array([p[1] for p in pairs], dtype=np.bool_)
        kappa = cohens_kappa(*_table(x, y))
        estimate = None
        if math.isfinite(kappa):
            picks = rng.integers(0, len(pairs), size=(draws, len(pairs)))
            xs, ys = x[picks], y[picks]
            drawn = _Cells(
                a=(xs & ys).mean(axis=1),
                b=(xs & ~ys).mean(axis=1),
                c=(~xs & ys).mean(axis=1),
                d=(~xs & ~ys).mean(axis=1),
            ).kappa()
            estimate = _percentile_estimate(kappa, drawn)
        out.append(
            ReviewerAgreement(
                reviewers=(first, second),
                trials=len(pairs),
                agreement=float((x == y).mean()),
                kappa=estimate,
            )
        )
    return out


def _table(x: NDArray[np.bool_], y: NDArray[np.bool_]) -> tuple[int, int, int, int]:
    return (
        int((x & y).sum()),
        int((x & ~y).sum()),
        int((~x & y).sum()),
        int((~x & ~y).sum()),
    )
