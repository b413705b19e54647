"""A busy service is scored at a cost the team chooses: a share of each stratum's traces,
picked by trace id (so every run picks the same ones), never a stratum left out, and the
share scored stated in all and per stratum."""

from __future__ import annotations

import math
from pathlib import Path

from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.traces.sampling import Sampler, fraction_of
from tests.support.otlp_traces import AgentTrace, export_request, write_s3_layout
from tests.unit.traces.conftest import Score, scored_trace_ids


def test_the_rate_is_the_share_scored_and_the_same_traces_are_picked_every_time() -> None:
    ids = [f"{n:032x}" for n in range(20_000)]
    first: Sampler[str] = Sampler(rate=0.1)
    picked = [i for i in ids if first.consider(("v1",), i, i)]
    again: Sampler[str] = Sampler(rate=0.1)
    assert [i for i in ids if again.consider(("v1",), i, i)] == picked
    share = first.total()
    sigma = math.sqrt(0.1 * 0.9 / len(ids))
    assert share.seen == 20_000 and abs(share.rate - 0.1) < 4 * sigma
    assert all((fraction_of(i) < 0.1) == (i in set(picked)) for i in ids[:2000])


def test_a_stratum_nothing_was_picked_of_is_scored_once_all_the_same() -> None:
    sampler: Sampler[str] = Sampler(rate=0.01)
    for n in range(1000):
        sampler.consider(("common",), f"c{n}", f"c{n}")
    rare = [f"rare{n}" for n in range(3) if fraction_of(f"rare{n}") >= 0.01]
    for trace_id in rare:
        assert not sampler.consider(("rare",), trace_id, trace_id)
    stand_ins = sampler.stand_ins()
    assert stand_ins == [min(rare, key=fraction_of)]
    shares = sampler.shares()
    assert (shares[("rare",)].seen, shares[("rare",)].scored) == (3, 1)
    assert shares[("common",)].scored == sum(fraction_of(f"c{n}") < 0.01 for n in range(1000))


def test_each_stratum_is_sampled_and_the_share_is_stated(tmp_path: Path, score: Score) -> None:
    busy = [
        AgentTrace(f"busy-{n}", tool=None, version="1.0", root_attributes={"tenant": "acme"})
        for n in range(300)
    ]
    rare_version = [AgentTrace(f"new-{n}", tool=None, version="2.0") for n in range(2)]
    rare_tenant = [
        AgentTrace(f"small-{n}", tool=None, version="1.0", root_attributes={"tenant": "tiny"})
        for n in range(2)
    ]
    write_s3_layout(
        tmp_path / "src",
        [export_request(busy[n : n + 50]) for n in range(0, 300, 50)]
        + [export_request(rare_version + rare_tenant)],
    )

    outcome = score(tmp_path / "src", tmp_path / "out", sample_rate="10%", strata=["tenant"])

    shares = {tuple(s.stratum.values()): (s.seen, s.scored) for s in outcome.intake.shares}
    picked_busy = sum(fraction_of(t.trace_id) < 0.1 for t in busy)
    assert shares[("1.0", "acme")] == (300, picked_busy)
    assert shares[("2.0", "-")][1] >= 1 and shares[("1.0", "tiny")][1] >= 1
    scored = set(scored_trace_ids(outcome))
    assert scored & {t.trace_id for t in rare_version}
    assert scored & {t.trace_id for t in rare_tenant}
    total = outcome.intake.counts
    assert (total.traces, total.scored) == (304, len(scored))
    lines = outcome.lines()
    assert any(f"304 agent trace(s), {len(scored)} scored" in line for line in lines)
    assert any(
        f"service.version=1.0, tenant=acme: {picked_busy} of 300 scored" in line for line in lines
    )
    for version in outcome.versions:
        run = read_results_json(version.outcome.run_dir / "results.json")
        seen, taken = int(run.labels["traces_seen"]), int(run.labels["traces_scored"])
        assert run.totals.trials == taken
        assert run.labels["share_scored"] == f"{taken / seen:.4f}"
    assert {
        v.recording.agent_version: int(
            read_results_json(v.outcome.run_dir / "results.json").labels["traces_seen"]
        )
        for v in outcome.versions
    } == {"1.0": 302, "2.0": 2}
