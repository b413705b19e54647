"""Paired runs through the one call: two agents on the same cases trial by trial, each
side a run folder of its own, compared pair by pair; with ``until_decided``, pairs added
where a case is undecided, within the budget, from the waves on record."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentflow_eval.errors import InputError
from agentflow_eval.models.request import RunRequest, ShardSpec
from agentflow_eval.pipeline.execute import execute
from agentflow_eval.pipeline.pairs import read_waves
from agentflow_eval.run.plan import AGAINST_FOLDER
from tests.support import paired_agents

AGENTS = Path(paired_agents.__file__)


def spec(name: str) -> str:
    return f"{AGENTS}:{name}"


@pytest.fixture
def evalset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with paired_agents.served_evalset(tmp_path, monkeypatch) as path:
        yield path


def request(evalset: str, tmp_path: Path, **settings: object) -> RunRequest:
    return RunRequest(
        agent=spec(settings.pop("candidate", "dropped")),  # type: ignore[arg-type]
        against=spec("steady_a"),
        evalset=evalset,
        runs=5,
        max_concurrency=16,
        output_dir=str(tmp_path / "out"),
        **settings,  # type: ignore[arg-type]
    )


async def test_a_paired_run_keeps_each_side_as_a_run_of_its_own(
    evalset: str, tmp_path: Path
) -> None:
    outcome = await execute(request(evalset, tmp_path))
    against = outcome.run_dir / AGAINST_FOLDER
    results = json.loads((against / "results.json").read_text())
    assert results["agent"] == "steady_a" and results["totals"]["trials"] == 100
    assert (against / "report.html").is_file()
    assert results["paired_with"] == {
        "run_id": outcome.run.run_id, "side": "baseline", "adaptive": False
    }  # fmt: skip
    assert outcome.run.paired_with is not None
    assert outcome.run.paired_with.run_id == results["run_id"]
    comparison = outcome.comparison
    assert comparison is not None and comparison.comparison is not None
    found = comparison.comparison
    assert found.pairing == "paired" and found.sequential is not None
    assert found.sequential.trials == 200 and not found.sequential.adaptive
    assert {case.pairs for case in found.sequential.cases} == {5}


async def test_until_decided_finds_the_planted_drops_within_the_budget(
    evalset: str, tmp_path: Path
) -> None:
    """Three cases dropped (95 % to 20 % and 25 %, 80 % to 10 %): five pairs cannot flag
    any of them at 20 cases; the waves find all three, flag no other case, and stay
    within the budget."""
    first = await execute(request(evalset, tmp_path / "one"))
    assert first.comparison is not None and first.comparison.comparison is not None
    assert first.comparison.comparison.sequential is not None
    assert first.comparison.comparison.sequential.counts["regressed"] == 0

    outcome = await execute(request(evalset, tmp_path, until_decided=True, max_trials=1000))
    assert outcome.comparison is not None and outcome.comparison.comparison is not None
    summary = outcome.comparison.comparison.sequential
    assert summary is not None and summary.adaptive
    regressed = {case.case_id for case in summary.cases if case.status == "regressed"}
    assert regressed == set(paired_agents.DROPPED)
    assert summary.trials <= 1000
    assert outcome.comparison.regressed  # the run regressed: its cases did
    waves = read_waves(outcome.run_dir)
    assert waves and all(len(wave) <= 8 for wave in waves)  # half the trials in flight
    # the waves went to the undecided: a regressed case got no pairs after it was flagged
    pairs = {case.case_id: case.pairs for case in summary.cases}
    assert max(pairs.values()) > 5 and min(pairs.values()) >= 5
    assert outcome.run.totals.trials == sum(pairs.values())


async def test_a_resumed_adaptive_run_decides_as_an_uninterrupted_one(
    evalset: str, tmp_path: Path
) -> None:
    """The waves on record decide what runs after a stop: a run stopped after its first
    waves (here: its trial files cut back to the first round and two waves) and resumed
    reaches the same verdicts, pairs and e-values as one that never stopped."""
    whole = await execute(request(evalset, tmp_path / "whole", until_decided=True))
    stopped = await execute(request(evalset, tmp_path / "cut", until_decided=True))
    folder = stopped.run_dir
    kept_waves = read_waves(folder)[:2]
    kept = {(c, i) for c in paired_agents.CASES for i in range(5)}
    kept |= {tuple(key) for wave in kept_waves for key in wave}
    for side in (folder, folder / AGAINST_FOLDER):
        for name in ("trials.jsonl", "judged.jsonl"):
            lines = (side / name).read_text().splitlines(keepends=True)
            held = [
                line
                for line in lines
                if (
                    (record := json.loads(line).get("trial", json.loads(line)))["case_id"],
                    record["trial_index"],
                )
                in kept
            ]
            (side / name).write_text("".join(held))
        for name in ("results.json", "comparison.json"):
            (side / name).unlink(missing_ok=True)
    (folder / "waves.jsonl").write_text(
        "".join(json.dumps({"wave": n, "pairs": w}) + "\n" for n, w in enumerate(kept_waves, 1))
    )
    resumed = await execute(
        request(evalset, tmp_path / "cut", until_decided=True).updated(resume=str(folder))
    )

    def verdicts(outcome):  # type: ignore[no-untyped-def]
        summary = outcome.comparison.comparison.sequential
        return [(c.case_id, c.status, c.pairs, c.e_value) for c in summary.cases]

    assert verdicts(resumed) == verdicts(whole)
    assert read_waves(folder) == read_waves(whole.run_dir)


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"baseline": "latest", "publish_to": "x"}, "leave out baseline"),
        ({"until_decided": True, "against": None}, "a pair needs a baseline agent"),
        ({"max_trials": 100}, "until_decided's budget"),
    ],
)
async def test_paired_settings_that_do_not_go_together_are_refused(
    evalset: str, tmp_path: Path, settings: dict[str, object], said: str
) -> None:
    with pytest.raises((InputError, ValueError), match=said):
        await execute(request(evalset, tmp_path).updated(**settings))


def test_a_paired_shard_plans_both_sides_of_its_cases_against_the_whole_run(
    evalset: str, tmp_path: Path
) -> None:
    """Shard 1 of 3 of the 20 cases holds 7 of them on both sides; its flags count all 20
    and its budget is 7/20 of the run's (350 of 1000; by default 4 x its first round)."""
    from agentflow_eval.pipeline.stages import PairedOptions
    from agentflow_eval.run.plan import plan_request

    shard = ShardSpec(index=0, count=3, parent_run_id="parent")
    adaptive = request(evalset, tmp_path, until_decided=True, max_trials=1000, shard=shard)
    handle, _ = plan_request(adaptive)
    with handle:
        plan = handle.plan
        assert plan.against is not None
        assert len(plan.eval_set.eval_cases) == len(plan.against.eval_set.eval_cases) == 7
        assert plan.run_cases == plan.against.run_cases == 20
        options = PairedOptions.of(adaptive, plan)
        assert options is not None
        assert options.design.family == 20 and options.design.max_trials == 350
        default = PairedOptions.of(adaptive.updated(max_trials=None), plan)
        assert default is not None and default.design.max_trials == 4 * 2 * 5 * 7
    parent = request(evalset, tmp_path / "whole", until_decided=True, shards=2)
    whole, _ = plan_request(parent)
    with whole:  # the parent of a sharded paired run: both sides of every case
        assert whole.plan.against is not None and whole.plan.run_cases == 20
        options = PairedOptions.of(parent, whole.plan)
        assert options is not None
        assert options.design.family is None and options.design.max_trials == 4 * 2 * 5 * 20


async def test_a_paired_run_does_not_re_judge(evalset: str, tmp_path: Path) -> None:
    from agentflow_eval.run.plan import plan_request

    source = await execute(
        RunRequest(agent=spec("steady_a"), evalset=evalset, runs=1, output_dir=str(tmp_path))
    )
    with pytest.raises(InputError, match="cannot re-judge a run"):
        plan_request(request(evalset, tmp_path).updated(rejudge_from=str(source.run_dir)))
