"""``run --baseline`` and the evaluate flow's ``baseline`` parameter under Prefect: the
compare task after the report, the comparison in every output, the gate, the events,
and ``latest`` staying on the last run that passed its gate."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter
from prefect.client.schemas.sorting import ArtifactSort
from prefect.testing.fixtures import asserting_events_worker  # noqa: F401 (a fixture)
from support.evalsets import one_case_evalset

from agentflow_eval.cli import main
from agentflow_eval.flows.evaluate import RegressionGateFailed, evaluate
from agentflow_eval.models.request import RunRequest

EVAL_SET_ID = "paris_weather"
CASE = "rain-in-paris"


@pytest.fixture
def eval_files(tmp_path: Path) -> dict[str, str]:
    """A one-case eval set judged by an expectation, an agent that passes it, one that
    fails it, and one agent whose versions do either (``mode.txt`` beside it says which:
    ``latest`` compares versions of the same agent)."""
    evalset = one_case_evalset(
        tmp_path / "paris.evalset.json", EVAL_SET_ID, CASE, "What is the weather in Paris?", "rain"
    )
    agents = tmp_path / "paris_agents.py"
    agents.write_text(
        "from pathlib import Path\n\n"
        "def good(message):\n    return 'Light rain in Paris, 61°F.'\n\n"
        "def bad(message):\n    return 'I have no idea.'\n\n"
        "def versioned(message):\n"
        "    mode = Path(__file__).with_name('mode.txt').read_text()\n"
        "    return good(message) if mode == 'good' else bad(message)\n"
    )
    return {
        "evalset": str(evalset),
        "good": f"{agents}:good",
        "bad": f"{agents}:bad",
        "versioned": f"{agents}:versioned",
        "mode": str(tmp_path / "mode.txt"),
    }


def _latest(published: Path) -> str:
    return json.loads((published / EVAL_SET_ID / "latest.json").read_text())["run_id"]


async def _artifact(key_part: str) -> str:
    """The newest artifact whose key holds ``key_part`` (earlier tests' runs made some)."""
    async with get_client() as client:
        artifacts = await client.read_artifacts(
            artifact_filter=ArtifactFilter(), sort=ArtifactSort.CREATED_DESC
        )
    found = [a for a in artifacts if a.key and key_part in a.key]
    assert found, f"no artifact with {key_part!r} in its key"
    return str(found[0].data)


def test_run_with_baseline_latest_and_the_gate(eval_files, tmp_path, capsys) -> None:
    out, published = tmp_path / "out", tmp_path / "published"
    common = [eval_files["evalset"], "--runs", "5", "--output", str(out)]
    publish = ["--publish-to", str(published)]

    # the first night: nothing to compare with yet, which passes the gate, and says so
    Path(eval_files["mode"]).write_text("good")
    first = ["run", eval_files["versioned"], *common, *publish, "--baseline", "latest"]
    assert main([*first, "--fail-on-regression"]) == 0
    printed = capsys.readouterr().out
    assert "baseline latest: not compared:" in printed and "no runs.json" in printed
    good_run = _latest(published)

    # a regressed version under the gate: exit 1, every output says why, latest stays put
    Path(eval_files["mode"]).write_text("bad")
    gated = ["run", eval_files["versioned"], *common, *publish, "--baseline", "latest"]
    assert main([*gated, "--fail-on-regression"]) == 1
    captured = capsys.readouterr()
    assert f"baseline: run {good_run} (" in captured.out
    assert f"  regressed: {CASE} 5/5 -> 0/5 (-100 pts, p " in captured.out
    assert "--fail-on-regression: a significant regression from the baseline" in captured.err
    # the newest run (two runs may start within one second: their folder names tie)
    run_dir = max(
        out.glob(f"{EVAL_SET_ID}/*"),
        key=lambda p: json.loads((p / "run.json").read_text())["started_at"],
    )
    record = json.loads((run_dir / "comparison.json").read_text())
    assert record["baseline"] == "latest" and record["fail_on_regression"] is True
    assert record["comparison"]["baseline"]["run_id"] == good_run
    assert record["comparison"]["cases"][0]["verdict"] == "regression"
    assert '<div class="cmp-box regression">' in (run_dir / "report.html").read_text()
    assert 'type="Regression"' in (run_dir / "junit.xml").read_text()
    assert (published / EVAL_SET_ID / run_dir.name / "comparison.json").is_file()
    assert _latest(published) == good_run  # a run that failed its gate is never latest

    # report-only: the same regression is reported, exits 0, and becomes the latest run
    assert main(gated) == 0
    assert f"  regressed: {CASE} 5/5 -> 0/5" in capsys.readouterr().out
    assert _latest(published) != good_run


async def test_the_flow_compares_states_a_missing_baseline_and_fails_its_gate(
    eval_files,
    tmp_path,
    asserting_events_worker,  # noqa: F811
) -> None:
    params = RunRequest(
        agent=eval_files["good"],
        evalset=eval_files["evalset"],
        runs=5,
        output_dir=str(tmp_path / "out"),
        baseline=str(tmp_path / "no-such-run"),
    )
    outcome = await evaluate(**params.flow_parameters())
    assert outcome.comparison is not None and outcome.comparison.problem is not None
    assert outcome.comparison.problem.kind == "unavailable"
    summary = await _artifact(f"{EVAL_SET_ID.replace('_', '-')}-summary")
    assert f"**Not compared** with `{tmp_path / 'no-such-run'}`" in summary

    await asyncio.to_thread(asserting_events_worker.wait_until_empty)
    events = {e.event: e for e in asserting_events_worker._client.events}
    unavailable = events["agentflow.eval.baseline-unavailable"]
    assert unavailable.payload["kind"] == "unavailable"
    assert unavailable.resource.id == f"agentflow.eval-set.{EVAL_SET_ID}"
    assert "agentflow.eval.regressed" not in events

    # the same run compared with the first one, by folder: a regression, under the gate
    bad = params.model_copy(
        update={
            "agent": eval_files["bad"],
            "baseline": str(outcome.run_dir),
            "fail_on_regression": True,
        }
    )
    asserting_events_worker._client.events.clear()
    with pytest.raises(RegressionGateFailed) as failed:
        await evaluate(**bad.flow_parameters())
    record = failed.value.record
    assert record.comparison is not None and record.comparison.baseline.run_id == outcome.run.run_id
    assert failed.value.outcome.run_dir.joinpath("comparison.json").is_file()
    await asyncio.to_thread(asserting_events_worker.wait_until_empty)
    events = {e.event: e for e in asserting_events_worker._client.events}
    regressed = events["agentflow.eval.regressed"]
    assert regressed.payload["baseline_run_id"] == outcome.run.run_id
    assert regressed.payload["verdict"] == "regression"
    assert regressed.payload["overall_verdict"] == record.comparison.overall.verdict
    assert regressed.payload["regressed_cases"] == [
        {
            "case_id": CASE,
            "baseline": "5/5",
            "candidate": "0/5",
            "change": -1.0,
            "p_adjusted": record.comparison.cases[0].p_adjusted,
        }
    ]
    assert regressed.payload["fail_on_regression"] is True
    assert regressed.payload["report_url"].endswith("/report.html")


async def test_latest_is_the_same_agents_and_a_mismatch_is_stated(
    eval_files,
    tmp_path,
    asserting_events_worker,  # noqa: F811
) -> None:
    """An A/B of two agents published under one prefix: each is compared with its own
    last good run; the first run of the second agent says why it is not compared."""
    good = RunRequest(
        agent=eval_files["good"],
        evalset=eval_files["evalset"],
        runs=5,
        output_dir=str(tmp_path / "out"),
        publish_to=str(tmp_path / "published"),
        baseline="latest",
        fail_on_regression=True,
    )
    first = await evaluate(**good.flow_parameters())
    assert first.run.track == "adhoc"  # started outside a deployment: by hand
    assert first.run.agent_spec == eval_files["good"]

    bad = good.model_copy(update={"agent": eval_files["bad"]})
    other = await evaluate(**bad.flow_parameters())  # passes its gate: nothing to regress from
    assert other.comparison is not None and other.comparison.problem is not None
    assert other.comparison.problem.kind == "other-agent"
    assert f"no completed run of {eval_files['bad']}" in other.comparison.problem.message
    comment = await _artifact(f"{EVAL_SET_ID.replace('_', '-')}-pr-summary")
    assert "not compared" in comment and "runs of different agents are not compared" in comment

    again = await evaluate(**good.flow_parameters())  # the bad agent's run is newer
    assert again.comparison is not None and again.comparison.comparison is not None
    assert again.comparison.comparison.baseline.run_id == first.run.run_id
    comment = await _artifact(f"{EVAL_SET_ID.replace('_', '-')}-pr-summary")
    assert comment.startswith(f"<!-- agentflow-eval:compare {EVAL_SET_ID} -->")
    assert f"run `{first.run.run_id}`" in comment

    await asyncio.to_thread(asserting_events_worker.wait_until_empty)
    completed = [
        e for e in asserting_events_worker._client.events if e.event == "agentflow.eval.completed"
    ]
    payload = completed[-1].payload
    assert payload["track"] == "adhoc"
    assert set(payload["usage"]) >= {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert payload["cost_usd"] == payload["usage"]["cost_usd"] + payload["judge_usage"]["cost_usd"]


async def test_min_pass_rate_fails_the_run_after_its_reports(eval_files, tmp_path) -> None:
    from agentflow_eval.flows.evaluate import PassRateGateFailed

    params = RunRequest(
        agent=eval_files["bad"],
        evalset=eval_files["evalset"],
        runs=2,
        output_dir=str(tmp_path / "out"),
        min_pass_rate=0.5,
    )
    with pytest.raises(PassRateGateFailed, match=r"pass rate 0% .* is below min_pass_rate 50%"):
        await evaluate(**params.flow_parameters())
    (results,) = (tmp_path / "out").glob("*/*/results.json")  # written all the same
    assert '"pass_rate": 0.0' in results.read_text()
    passing = params.model_copy(update={"agent": eval_files["good"]})
    assert (await evaluate(**passing.flow_parameters())).run.totals.pass_rate == 1.0


async def test_an_agent_outside_allowed_agents_is_refused_before_it_runs(
    eval_files, tmp_path
) -> None:
    from agentflow_eval.errors import InputError

    params = RunRequest(
        agent=eval_files["good"],
        evalset=eval_files["evalset"],
        output_dir=str(tmp_path / "out"),
        allowed_agents=["examples"],
    )
    with pytest.raises(InputError, match="an agent file is not allowed when allowed_agents"):
        await evaluate(**params.flow_parameters())
    unnamed = params.model_copy(update={"agent": None})
    with pytest.raises(InputError, match="no agent was named"):
        await evaluate(**unnamed.flow_parameters())
    assert not (tmp_path / "out").exists()


async def test_a_resume_from_the_form_takes_the_runs_settings(eval_files, tmp_path) -> None:
    """The form submits every field, runs at its default: a resume keeps the run's own
    runs per case (and agent) instead of refusing the difference."""
    started = RunRequest(
        agent=eval_files["good"], evalset=eval_files["evalset"], runs=2, output_dir=str(tmp_path)
    )
    first = await evaluate(**started.flow_parameters())
    from_form = RunRequest(
        agent="",
        evalset=eval_files["evalset"],
        runs=5,  # the form's default, never typed
        output_dir=str(tmp_path),
        resume=str(first.run_dir),
        min_pass_rate=0.5,
    )
    resumed = await evaluate(**from_form.flow_parameters())
    assert resumed.run_dir == first.run_dir and resumed.run.run_id == first.run.run_id
    assert resumed.run.runs_per_case == 2 and resumed.run.totals.trials == 2
    assert resumed.run.agent_spec == eval_files["good"]
