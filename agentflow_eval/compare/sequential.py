"""Per-case verdicts from paired trials that stay valid however often they are looked at.

A paired run gives each case pairs: trial ``j`` of the baseline agent and of the
candidate, run side by side. A pair's outcome is ``x = b - c``, the baseline's pass
minus the candidate's, each pass in ``[0, 1]`` (1 or 0 for a deterministic verdict; an
LLM judge's share of samples that passed, so a trial counts only as firmly as its judge
gives it). ``x > 0`` leans toward a regression; concordant pairs (``x = 0``) carry no
evidence either way, so the evidence lives in the discordant pairs.

**Regressed.** The evidence that a case dropped is a test martingale: the average, over a
fixed grid of bets ``λ`` in (0, 1), of ``Π (1 + λ x_j)``. Under "no drop" (``E[x] ≤ 0``)
each factor has expectation at most 1, so by Ville's inequality the average exceeds
``1/a`` with probability at most ``a`` at any time, whenever the run looks, stops or adds
pairs, and whatever decided which cases got more pairs (an e-process; Ramdas et al.,
"Game-theoretic statistics and safe anytime-valid inference", 2023, and Waudby-Smith and
Ramdas, "Estimating means of bounded random variables by betting", 2024). A case is
flagged the first time its e-value reaches ``m/α`` for ``m`` cases compared and stays
flagged: by a union bound the chance that any case without a drop is ever flagged is at
most ``α`` (family-wise). A shard of a sharded run holds only its share of the cases and
still counts all ``m`` (:attr:`Design.family`), so the bound covers the whole run.

**Cleared.** The evidence against a drop of ``δ`` or more is the same construction for
``E[x] ≥ δ``; a case is cleared when it reaches ``1/α``, so a case that did drop by
``δ`` or more is cleared with probability at most ``α``.

**Capped / undecided.** A case that reached the pairs it may have without either is
capped; one left when the budget ran out is undecided.

**The change's interval.** Inverting the two one-sided bets at each candidate mean gives
a confidence sequence for the change ``E[c - b]`` (1 - α, valid at every look): the run
may stop anywhere and the interval it reports still holds.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from agentflow_eval.compare.models import SequentialCase, SequentialStatus, SequentialSummary
from agentflow_eval.compare.power import TARGET_POWER, runs_needed

__all__ = [
    "BETS",
    "PAIRS_PER_CASE_IN_A_WAVE",
    "CaseEvidence",
    "Design",
    "Ledger",
    "allocate_wave",
    "case_status",
    "fixed_design_trials",
    "sequential_summary",
    "shard_budget",
]

BETS: npt.NDArray[np.float64] = np.linspace(0.05, 0.95, 19)
"""The bets averaged over: small ones grow slowly but safely on faint drops, large ones
fast on stark drops; the average pays at most ``log 19`` for not knowing which."""

_MEANS: npt.NDArray[np.float64] = np.linspace(-1.0, 1.0, 401)
"""Candidate values of ``E[b - c]`` the confidence sequence is computed on (steps of
0.005)."""


def _log_mean_exp(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``log(mean(exp(values)))`` along the last axis, without overflow."""
    top = values.max(axis=-1, keepdims=True)
    total = np.exp(values - top).sum(axis=-1)
    found: npt.NDArray[np.float64] = top[..., 0] + np.log(total) - math.log(values.shape[-1])
    return found


_DROP, _RISE, _CLEAR = 0, 1, 2
"""The rows of a case's running log-wealth: the bets on a drop, on a rise, and against a
drop of ``clear_drop``."""


@functools.lru_cache(maxsize=4096)
def _step(x: float, clear_drop: float) -> npt.NDArray[np.float64]:
    """Each row's log-wealth step for a pair's ``x`` (and ``clear_drop``): a run's pairs
    take a handful of values (-1, 0 and 1 for deterministic verdicts), so each is computed
    once. Read-only: every case adds the same array."""
    # E[x] >= δ bet against: y = (δ - x) scaled into [-1, 1]
    outcome = np.array([[x], [-x], [(clear_drop - x) / (1 + clear_drop)]])
    found: npt.NDArray[np.float64] = np.log1p(BETS[None, :] * outcome)
    found.flags.writeable = False
    return found


@dataclass
class CaseEvidence:
    """One case's pairs so far: the running logs of the bets' wealth (adding a pair is
    O(1) in the pairs so far) and the pairs' outcomes."""

    clear_drop: float
    """``δ``: the drop a cleared case is shown not to have."""
    pairs: int = 0
    discordant: int = 0
    total: float = 0.0
    """The sum of ``x = b - c`` over the pairs."""
    outcomes: list[float] = field(default_factory=list)
    """Each pair's ``x``, for the confidence sequence (asked for once, when reported)."""
    _wealth: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((3, len(BETS))))
    """The log-wealth of each bet, one row per question (:data:`_DROP`, :data:`_RISE`,
    :data:`_CLEAR`)."""
    _log_e: npt.NDArray[np.float64] | None = field(default=None, repr=False)
    """The three log e-values, computed when first asked for after a pair."""

    def __post_init__(self) -> None:
        if not 0 < self.clear_drop < 1:
            raise ValueError(f"the drop to clear must be between 0 and 1, got {self.clear_drop}")

    def add(self, baseline: float, candidate: float) -> None:
        """One pair: the baseline's and the candidate's pass, each in [0, 1]."""
        if not (0 <= baseline <= 1 and 0 <= candidate <= 1):
            raise ValueError(f"a pass is in [0, 1], got {baseline} and {candidate}")
        x = baseline - candidate
        self.pairs += 1
        self.discordant += x != 0
        self.total += x
        self._wealth += _step(x, self.clear_drop)
        self._log_e = None
        self.outcomes.append(x)

    def _log_e_values(self) -> npt.NDArray[np.float64]:
        if self._log_e is None:
            self._log_e = _log_mean_exp(self._wealth)
        return self._log_e

    @property
    def log_e_drop(self) -> float:
        """The log of the e-value that the case dropped (0 before any pair)."""
        return float(self._log_e_values()[_DROP])

    @property
    def log_e_rise(self) -> float:
        """The log of the e-value that the case improved."""
        return float(self._log_e_values()[_RISE])

    @property
    def log_e_clear(self) -> float:
        """The log of the e-value that the case did not drop by ``clear_drop`` or more."""
        return float(self._log_e_values()[_CLEAR])

    @property
    def change(self) -> float | None:
        """The mean change ``c - b`` over the pairs (``None`` before any)."""
        return -self.total / self.pairs if self.pairs else None

    def interval(self, alpha: float) -> tuple[float, float]:
        """The 1 - ``alpha`` confidence sequence of the change ``E[c - b]`` at this look."""
        limit = math.log(2 / alpha)
        xs = np.asarray(self.outcomes)[:, None, None]  # pairs × means × bets
        scale = (1 + np.abs(_MEANS))[None, :, None]
        shift = (xs - _MEANS[None, :, None]) / scale
        bets = BETS[None, None, :]
        above = _log_mean_exp(np.log1p(bets * shift).sum(axis=0))
        below = _log_mean_exp(np.log1p(-bets * shift).sum(axis=0))
        kept = (above < limit) & (below < limit)
        if not kept.any():  # cannot happen with a valid sequence; be explicit if it does
            middle = self.total / max(self.pairs, 1)
            return (-middle, -middle)
        means = _MEANS[kept]
        low, high = float(means.min()), float(means.max())
        return (round(-high, 3), round(-low, 3))

    @property
    def suspicion(self) -> float:
        """How much the case looks like a drop, optimistically: the mean ``b - c`` plus
        its uncertainty, so a case with few pairs is looked at again before a case that
        has shown, over many pairs, only a small drop."""
        if not self.pairs:
            return math.inf
        return self.total / self.pairs + 1 / math.sqrt(self.pairs)


def case_status(
    evidence: CaseEvidence, cases: int, alpha: float, cap: int | None
) -> SequentialStatus:
    """What the evidence says now: regressed or improved (e-value at ``cases / alpha``),
    cleared (e-value against a drop of ``clear_drop`` at ``1 / alpha``), capped (``cap``
    pairs reached), else undecided."""
    if evidence.log_e_drop >= math.log(cases / alpha):
        return "regressed"
    if evidence.log_e_rise >= math.log(cases / alpha):
        return "improved"
    if evidence.log_e_clear >= math.log(1 / alpha):
        return "cleared"
    if cap is not None and evidence.pairs >= cap:
        return "capped"
    return "undecided"


PAIRS_PER_CASE_IN_A_WAVE = 4
"""A wave gives its pairs to a few of the most suspicious cases, this many each: more
pairs to fewer cases decide them sooner than one pair to many (a simulation of 40 cases
found 0.79 of planted drops with 4 against 0.62 with 1, at the same budget)."""


def allocate_wave(
    evidence: Mapping[str, CaseEvidence],
    undecided: Iterable[str],
    pairs: int,
    cap: int | None,
) -> list[str]:
    """The cases the next wave's ``pairs`` go to (a case once per pair): the undecided
    cases most suspicious first (:attr:`CaseEvidence.suspicion`, ties by id),
    :data:`PAIRS_PER_CASE_IN_A_WAVE` each, none past ``cap``. Fewer than ``pairs`` when
    the cases cannot take them."""
    order: Sequence[str] = sorted(undecided, key=lambda case: (-evidence[case].suspicion, case))
    chosen: list[str] = []
    for case in order:
        room = PAIRS_PER_CASE_IN_A_WAVE
        if cap is not None:
            room = min(room, cap - evidence[case].pairs)
        take = min(room, pairs - len(chosen))
        chosen.extend([case] * max(take, 0))
        if len(chosen) >= pairs:
            break
    return chosen


@dataclass(frozen=True)
class Design:
    """How an adaptive paired run spends its trials."""

    alpha: float = 0.05
    clear_drop: float = 0.2
    max_trials: int | None = None
    """Trials the run may spend in all, both agents counted (``None``: no budget)."""
    max_pairs_per_case: int | None = 100
    wave_pairs: int = 8
    """Pairs a wave runs at once: half the trials in flight, so a wave keeps them full."""
    family: int | None = None
    """``m``, the cases a flag's threshold ``m/α`` counts (``None``: the ledger's own). A
    shard of a sharded run decides only its share of the cases, but the union bound that
    keeps family-wise error at α runs over every case of the run, so its ledger counts
    them all."""

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be between 0 and 1, got {self.alpha}")
        if self.wave_pairs < 1:
            raise ValueError(f"a wave runs at least one pair, got {self.wave_pairs}")
        if self.family is not None and self.family < 1:
            raise ValueError(f"a flag's threshold counts at least one case, got {self.family}")


def shard_budget(max_trials: int, shard_cases: int, run_cases: int) -> int:
    """A shard's part of a sharded adaptive run's budget ``max_trials``: in proportion to
    its cases, ``max_trials * shard_cases // run_cases``, rounded down so that the shards
    together never spend more than the run may (each shard decides its waves alone, so
    the budget cannot move between them as the run goes)."""
    if not 0 < shard_cases <= run_cases:
        raise ValueError(f"a shard has 1 to {run_cases} of the run's cases, got {shard_cases}")
    return max_trials * shard_cases // run_cases


@dataclass
class Ledger:
    """The pairs of every case of a paired run and what they decide, as the design reads
    them: the evidence, each case's status (a regression, once found, stays found), the
    trials spent and the next wave."""

    design: Design
    case_ids: Sequence[str]
    evidence: dict[str, CaseEvidence] = field(init=False)
    status: dict[str, SequentialStatus] = field(init=False)
    spent: int = 0

    def __post_init__(self) -> None:
        if self.design.family is not None and self.design.family < len(self.case_ids):
            raise ValueError(
                f"a flag's threshold counts {self.design.family} cases, fewer than the "
                f"{len(self.case_ids)} the ledger holds"
            )
        self.evidence = {case: CaseEvidence(self.design.clear_drop) for case in self.case_ids}
        self.status = dict.fromkeys(self.case_ids, "undecided")

    @property
    def family(self) -> int:
        """``m``: the cases a flag's threshold counts (see :attr:`Design.family`)."""
        return self.design.family or len(self.case_ids)

    def record(self, case: str, baseline: float, candidate: float) -> None:
        """One pair of ``case`` (two trials)."""
        self.evidence[case].add(baseline, candidate)
        self.spent += 2

    def settle(self, cases: Iterable[str] | None = None) -> None:
        """The status of ``cases`` (default: every case) from their evidence so far."""
        design = self.design
        for case in self.case_ids if cases is None else cases:
            if self.status[case] not in ("regressed", "improved"):
                self.status[case] = case_status(
                    self.evidence[case],
                    self.family,
                    design.alpha,
                    design.max_pairs_per_case,
                )

    @property
    def undecided(self) -> list[str]:
        return [case for case in self.case_ids if self.status[case] == "undecided"]

    def next_wave(self) -> list[str]:
        """The cases the next wave's pairs go to (empty: the run is done, every case
        decided or capped, or the budget spent)."""
        pairs = self.design.wave_pairs
        if self.design.max_trials is not None:
            pairs = min(pairs, (self.design.max_trials - self.spent) // 2)
        if pairs <= 0:
            return []
        return allocate_wave(self.evidence, self.undecided, pairs, self.design.max_pairs_per_case)


def sequential_summary(
    pairs: Mapping[str, Sequence[tuple[int, float, float]]],
    design: Design,
    *,
    adaptive: bool,
    first_round: int,
    baseline_rates: Mapping[str, float],
) -> SequentialSummary:
    """Each case's verdict from its pairs ``(trial index, baseline pass, candidate
    pass)``, replayed in trial order so that a case flagged at some look stays flagged,
    and what a fixed design would have spent (at ``baseline_rates``)."""
    ledger = Ledger(design, sorted(pairs))
    for case, found in pairs.items():
        for _index, baseline, candidate in sorted(found):
            ledger.record(case, baseline, candidate)
            ledger.settle([case])
    counts = dict.fromkeys(("regressed", "improved", "cleared", "capped", "undecided"), 0)
    cases = []
    for case in ledger.case_ids:
        evidence, status = ledger.evidence[case], ledger.status[case]
        counts[status] += 1
        low, high = evidence.interval(design.alpha) if evidence.pairs else (None, None)
        cases.append(
            SequentialCase(
                case_id=case,
                status=status,
                pairs=evidence.pairs,
                discordant=evidence.discordant,
                e_value=round(math.exp(min(evidence.log_e_drop, 700.0)), 3),
                change=None if evidence.change is None else round(evidence.change, 4) + 0.0,
                ci_low=low,
                ci_high=high,
            )
        )
    return SequentialSummary(
        alpha=design.alpha,
        threshold=ledger.family / design.alpha,
        clear_drop=design.clear_drop,
        adaptive=adaptive,
        max_pairs_per_case=design.max_pairs_per_case if adaptive else None,
        max_trials=design.max_trials if adaptive else None,
        trials=ledger.spent,
        first_round_pairs=first_round,
        fixed_design_trials=fixed_design_trials(
            list(baseline_rates.values()), design.clear_drop, design.alpha
        ),
        counts=counts,
        cases=cases,
    )


def fixed_design_trials(rates: Sequence[float], drop: float, alpha: float) -> int | None:
    """Trials (both sides) a fixed design needs for the exact per-case test with Holm's
    correction to find a drop of ``drop`` in every case with 80 % power: the runs per
    side each case needs at its baseline rate (a case that cannot drop that far needs
    none), at the level a case that regressed alone among ``len(rates)`` must reach."""
    if not rates:
        return None
    level = alpha / (2 * len(rates))
    total = 0
    for rate in rates:
        needed = runs_needed(rate, drop, level, TARGET_POWER) if rate >= drop else None
        if needed is not None:
            total += 2 * needed.runs
    return total
