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
from agentflow_eval.models.params import EvaluateParams

EVAL_SET_ID = "paris_weather"
CASE = "rain-in-paris"


@pytest.fixture
def eval_files(tmp_path: Path) -> dict[str, str]:
    """A one-case eval set judged by an expectation, an agent that passes it and one
    that fails it."""
    evalset = one_case_evalset(
        tmp_path / "paris.evalset.json", EVAL_SET_ID, CASE, "What is the weather in Paris?", "rain"
    )
    agents = tmp_path / "paris_agents.py"
    agents.write_text(
        "def good(message):\n    return 'Light rain in Paris, 61°F.'\n\n"
        "def bad(message):\n    return 'I have no idea.'\n"
    )
    return {"evalset": str(evalset), "good": f"{agents}:good", "bad": f"{agents}:bad"}


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
    first = ["run", eval_files["good"], *common, *publish, "--baseline", "latest"]
    assert main([*first, "--fail-on-regression"]) == 0
    printed = capsys.readouterr().out
    assert "baseline latest: not compared:" in printed and "no latest.json" in printed
    good_run = _latest(published)

    # a regressed agent under the gate: exit 1, every output says why, latest stays put
    gated = ["run", eval_files["bad"], *common, *publish, "--baseline", "latest"]
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
    params = EvaluateParams(
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
