"""A shard of a sharded paired run: its flags count every case of the run (``m`` over
all cases, so the family-wise error holds over the run, not per shard), and its budget
is its cases' share of the run's."""

from __future__ import annotations

import pytest

from agentflow_eval.compare.sequential import Design, Ledger, sequential_summary, shard_budget

ALPHA = 0.05


def test_a_shards_budget_is_its_share_of_the_runs_rounded_down() -> None:
    assert shard_budget(1000, 7, 20) == 350
    assert shard_budget(1000, 10, 20) == 500
    # three shards of 20 cases (7, 7, 6) never spend more than the run may
    parts = [shard_budget(1001, n, 20) for n in (7, 7, 6)]
    assert parts == [350, 350, 300] and sum(parts) <= 1001
    # the default budget, four times the first round, is split exactly
    runs = 5
    assert shard_budget(4 * 2 * runs * 20, 7, 20) == 4 * 2 * runs * 7
    assert shard_budget(1000, 20, 20) == 1000  # one shard: the whole budget


@pytest.mark.parametrize(("shard", "run"), [(0, 20), (21, 20)])
def test_a_shard_holds_some_of_the_runs_cases(shard: int, run: int) -> None:
    with pytest.raises(ValueError, match="a shard has 1 to 20"):
        shard_budget(1000, shard, run)


def _twelve_drops(ledger: Ledger) -> None:
    """Twelve pairs where the baseline passed and the candidate failed: an e-value of
    about 560, past 10/α (200) and short of 40/α (800)."""
    for _ in range(12):
        ledger.record("c0", 1.0, 0.0)
    ledger.settle(["c0"])


def test_a_shards_flag_counts_every_case_of_the_run() -> None:
    """The same evidence on a shard of 10 of the run's 40 cases: not enough to flag it
    among 40 (the run's family), though enough among the shard's 10 alone."""
    cases = [f"c{i}" for i in range(10)]
    alone = Ledger(Design(alpha=ALPHA), cases)
    _twelve_drops(alone)
    assert alone.family == 10 and alone.status["c0"] == "regressed"
    shard = Ledger(Design(alpha=ALPHA, family=40), cases)
    _twelve_drops(shard)
    assert shard.family == 40 and shard.status["c0"] == "undecided"
    for _ in range(2):  # 14 pairs: past 40/α
        shard.record("c0", 1.0, 0.0)
    shard.settle(["c0"])
    assert shard.status["c0"] == "regressed"


def test_a_shards_summary_states_the_runs_threshold() -> None:
    pairs = {"c0": [(i, 1.0, 0.0) for i in range(12)], "c1": [(0, 1.0, 1.0)]}
    design = Design(alpha=ALPHA, family=40)
    summary = sequential_summary(
        pairs, design, adaptive=True, first_round=1, baseline_rates={"c0": 1.0, "c1": 1.0}
    )
    assert summary.threshold == pytest.approx(40 / ALPHA)
    assert {case.case_id: case.status for case in summary.cases}["c0"] == "undecided"


def test_a_family_smaller_than_the_ledgers_cases_is_refused() -> None:
    with pytest.raises(ValueError, match="counts 3 cases, fewer than the 4"):
        Ledger(Design(family=3), ["a", "b", "c", "d"])
    with pytest.raises(ValueError, match="at least one case"):
        Design(family=0)
