"""``latest`` is the last good run of the same agent: an A/B of two agents published under
one prefix never compares one agent with the other, and a run that finds only other
agents' runs says so instead of comparing."""

from __future__ import annotations

from pathlib import Path

from support.run_counts import Counts, run_with_counts
from support.sample_results import write_run_dir

from agentflow_eval.compare.baseline import compare_with_baseline
from agentflow_eval.compare.brief import comparison_lines
from agentflow_eval.models.results import RunResult
from agentflow_eval.publish.publisher import publish_run, run_folder
from agentflow_eval.report.markdown import comparison_markdown

GOOD = [Counts("a", 10, 10), Counts("b", 10, 10)]


def _run(run_id: str, day: int, spec: str, model: str | None = None) -> RunResult:
    run = run_with_counts(GOOD, run_id=run_id, day=day)
    return run.model_copy(update={"agent_spec": spec, "agent_model": model})


def _publish(tmp_path: Path, run: RunResult) -> None:
    folder = write_run_dir(tmp_path / "runs" / run_folder(run), run)
    assert publish_run(folder, tmp_path / "published").published


def test_latest_skips_newer_runs_of_another_agent(tmp_path: Path) -> None:
    _publish(tmp_path, _run("a1", 0, "team.agent_a:agent"))
    _publish(tmp_path, _run("b1", 1, "team.agent_b:agent"))  # newer, the other agent
    candidate = _run("a2", 2, "team.agent_a:agent")
    record = compare_with_baseline(candidate, "latest", publish_to=str(tmp_path / "published"))
    assert record.comparison is not None
    assert record.comparison.baseline.run_id == "a1"


def test_latest_matches_the_model_when_the_run_names_one(tmp_path: Path) -> None:
    _publish(tmp_path, _run("m1", 0, "team.agent_a:agent", model="gpt-4o"))
    _publish(tmp_path, _run("m2", 1, "team.agent_a:agent", model="gpt-4o-mini"))
    candidate = _run("m3", 2, "team.agent_a:agent", model="gpt-4o")
    record = compare_with_baseline(candidate, "latest", publish_to=str(tmp_path / "published"))
    assert record.comparison is not None
    assert record.comparison.baseline.run_id == "m1"


def test_only_other_agents_runs_is_a_stated_mismatch_not_a_comparison(tmp_path: Path) -> None:
    _publish(tmp_path, _run("b1", 0, "team.agent_b:agent"))
    candidate = _run("a1", 1, "team.agent_a:agent")
    record = compare_with_baseline(
        candidate, "latest", publish_to=str(tmp_path / "published"), fail_on_regression=True
    )
    assert record.comparison is None and record.problem is not None
    assert record.problem.kind == "other-agent"
    assert "no completed run of team.agent_a:agent" in record.problem.message
    assert "only of team.agent_b:agent" in record.problem.message
    assert not record.gate_failed  # like a first run: nothing of this agent to regress from
    assert "runs of different agents are not compared" in comparison_lines(record)[0]
    summary = comparison_markdown(record)
    assert "**Not compared**" in summary and "different agents are not compared" in summary
    assert "Fails on regression" not in summary


def test_runs_started_different_ways_keep_apart_histories(tmp_path: Path) -> None:
    spec = "team.agent_a:agent"
    _publish(tmp_path, _run("n1", 0, spec).model_copy(update={"track": "nightly"}))
    _publish(tmp_path, _run("h1", 1, spec).model_copy(update={"track": "adhoc"}))
    nightly = _run("n2", 2, spec).model_copy(update={"track": "nightly"})
    record = compare_with_baseline(nightly, "latest", publish_to=str(tmp_path / "published"))
    assert record.comparison is not None
    assert record.comparison.baseline.run_id == "n1"  # not the newer run started by hand
    event = _run("e1", 3, spec).model_copy(update={"track": "event"})
    apart = compare_with_baseline(event, "latest", publish_to=str(tmp_path / "published"))
    assert apart.problem is not None and "in history 'event'" in apart.problem.message
    # a run published before tracks were recorded is every track's
    _publish(tmp_path, _run("old", 4, spec))
    assert (
        compare_with_baseline(event, "latest", publish_to=str(tmp_path / "published")).comparison
        is not None
    )
