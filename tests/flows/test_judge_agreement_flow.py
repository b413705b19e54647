"""The evaluate flow measures its judges against people: a re-judge of a labelled run
finds the labels beside its source, writes the figures to results.json and the summary
artifact, and, held to ``min_judge_agreement``, names the judge untrustworthy in the
``agentflow.eval.judge-untrustworthy`` event and the completed event (the run still
completes: the verdicts stand)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter
from prefect.client.schemas.sorting import ArtifactSort
from prefect.testing.fixtures import asserting_events_worker  # noqa: F401 (a fixture)
from support.evalsets import one_case_evalset

from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.models.request import RunRequest
from agentflow_eval.review.labels import Label, append_labels

EVAL_SET_ID = "rome_weather"
CASE = "sun-in-rome"


async def _summary() -> str:
    async with get_client() as client:
        artifacts = await client.read_artifacts(
            artifact_filter=ArtifactFilter(), sort=ArtifactSort.CREATED_DESC
        )
    found = [a for a in artifacts if a.key and f"{EVAL_SET_ID.replace('_', '-')}-summary" in a.key]
    assert found, "no summary artifact"
    return str(found[0].data)


async def test_a_labelled_run_rejudged_names_its_untrustworthy_judge(
    tmp_path: Path,
    asserting_events_worker,  # noqa: F811
) -> None:
    evalset = one_case_evalset(
        tmp_path / "rome.evalset.json", EVAL_SET_ID, CASE, "Weather in Rome?", "sun"
    )
    agents = tmp_path / "rome_agent.py"
    agents.write_text("def agent(message):\n    return 'Full sun in Rome, 75°F.'\n")
    first = await evaluate(
        **RunRequest(
            agent=f"{agents}:agent", evalset=str(evalset), runs=4, output_dir=str(tmp_path / "out")
        ).flow_parameters()
    )
    assert first.run.judge_agreement == []
    [criterion] = {
        c.criterion
        for t in read_results_json(first.run_dir / "results.json").trials
        for c in t.criteria
    }
    # people fail two of the four answers the criterion passed
    append_labels(
        first.run_dir,
        [
            Label(
                run_id=first.run.run_id,
                case_id=CASE,
                trial=trial,
                criterion=criterion,
                content_key=None,
                label="fail" if trial < 2 else "pass",
                reviewer="ana",
                labelled_at=datetime(2026, 11, 21, tzinfo=UTC),
            )
            for trial in range(4)
        ],
    )
    asserting_events_worker._client.events.clear()

    again = await evaluate(
        **RunRequest(
            rejudge_from=str(first.run_dir),
            evalset=str(evalset),
            output_dir=str(tmp_path / "out"),
            min_judge_agreement=0.9,
        ).flow_parameters()
    )

    [agreement] = read_results_json(again.run_dir / "results.json").judge_agreement
    assert agreement.agreement is not None and agreement.agreement.value == 0.5
    assert agreement.untrustworthy and agreement.labelled_trials == 4
    assert (again.run_dir / "labels.jsonl").is_file()
    summary = await _summary()
    assert "## Judges against people" in summary and "is untrustworthy" in summary
    await asyncio.to_thread(asserting_events_worker.wait_until_empty)
    events = {e.event: e for e in asserting_events_worker._client.events}
    doubted = events["agentflow.eval.judge-untrustworthy"]
    [judge] = doubted.payload["judges"]
    assert judge["criterion"] == criterion and judge["agreement"]["value"] == 0.5
    assert doubted.resource.id == f"agentflow.eval-set.{EVAL_SET_ID}"
    completed = events["agentflow.eval.completed"]
    assert completed.payload["untrustworthy_judges"] == [criterion]
