"""Simulated paired runs through the adaptive design itself (:class:`Ledger`): 40 cases
with the baseline rates the issue describes (half at 90-100 %, a third at 60-90 %, the
rest at 20-60 %), some dropped, each pair two independent trials."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentflow_eval.compare.sequential import Design, Ledger

CASES = 40
FIRST_ROUND = 5


@dataclass(frozen=True)
class Outcome:
    flagged_dropped: int
    dropped: int
    false_flags: int
    trials: int


def baseline_rates(rng: np.random.Generator) -> np.ndarray:
    return np.concatenate(
        [rng.uniform(0.9, 1.0, 20), rng.uniform(0.6, 0.9, 13), rng.uniform(0.2, 0.6, 7)]
    )


def simulate(rng: np.random.Generator, drops: list[float], design: Design) -> Outcome:
    """One paired run: the first round of :data:`FIRST_ROUND` pairs per case, then the
    design's waves until every case is decided or the budget is spent; the evidence is
    settled after every pair (continuous monitoring)."""
    p = baseline_rates(rng)
    q = p.copy()
    dropped = rng.choice(CASES, size=len(drops), replace=False)
    for case, drop in zip(dropped, drops, strict=True):
        q[case] = max(0.0, p[case] - drop)
    ids = [f"c{i:02d}" for i in range(CASES)]
    ledger = Ledger(design, ids)

    def pair(case: int) -> None:
        ledger.record(ids[case], float(rng.random() < p[case]), float(rng.random() < q[case]))
        ledger.settle([ids[case]])

    for _ in range(FIRST_ROUND):
        for case in range(CASES):
            pair(case)
    while wave := ledger.next_wave():
        for case_id in wave:
            pair(ids.index(case_id))
    flagged = {i for i, case in enumerate(ids) if ledger.status[case] == "regressed"}
    return Outcome(
        flagged_dropped=len(flagged & set(dropped.tolist())),
        dropped=len(drops),
        false_flags=len(flagged - set(dropped.tolist())),
        trials=ledger.spent,
    )
