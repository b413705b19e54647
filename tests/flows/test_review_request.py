"""A run that asks for its judges to be reviewed (``review_sample``), under Prefect: once
reported, it starts a flow run of the review deployment for its folder and completes
without waiting for it; on a server without that deployment it completes all the same,
and its summary (and the CLI's lines) say the review was not started and how to label
the run instead."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    FlowRunFilter,
    FlowRunFilterDeploymentId,
)

from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.review_params import REVIEW_DEPLOYMENT
from tests.support.prefect_records import flow_run_with

ROOT = Path(__file__).resolve().parents[2]


def _request(output_dir: Path) -> RunRequest:
    return RunRequest(
        agent="examples.weather.agent:agent",
        evalset=str(ROOT / "examples" / "weather" / "weather.evalset.json"),
        runs=1,
        output_dir=str(output_dir),
        review_sample=3,
    )


async def _summary(flow_run_id: UUID) -> str:
    async with get_client() as client:
        artifacts = await client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
        )
    (summary,) = [a for a in artifacts if a.type == "markdown" and "summary" in (a.key or "")]
    return str(summary.data)


@pytest.fixture
async def review_deployment() -> AsyncIterator[UUID]:
    """The review deployment, as `prefect deploy` makes it (no worker: its flow runs stay
    scheduled); removed after the test, so the other tests' server has none."""
    flow_name, _, name = REVIEW_DEPLOYMENT.partition("/")
    async with get_client() as client:
        flow_id = await client.create_flow_from_name(flow_name)
        deployment_id = await client.create_deployment(
            flow_id=flow_id, name=name, entrypoint="flows/review.py:review"
        )
    yield deployment_id
    async with get_client() as client:
        await client.delete_deployment(deployment_id)


async def test_a_run_starts_its_review_and_completes_without_waiting_for_it(
    tmp_path: Path, review_deployment: UUID
) -> None:
    outcome = await evaluate(**_request(tmp_path / "out").flow_parameters())

    async with get_client() as client:
        (started,) = await client.read_flow_runs(
            flow_run_filter=FlowRunFilter(
                deployment_id=FlowRunFilterDeploymentId(any_=[review_deployment])
            )
        )
    given = {k: started.parameters.get(k) for k in ("run", "size", "disagreeing_first")}
    assert given == {"run": str(outcome.run_dir), "size": 3, "disagreeing_first": True}
    assert started.state is not None and started.state.is_scheduled()  # nobody waited on it
    assert started.parent_task_run_id is None  # a flow run of its own, not a subflow
    line = f"flow run {started.name} of {REVIEW_DEPLOYMENT}"
    assert any(line in note for note in outcome.notes), outcome.notes
    run = await flow_run_with(output_dir=str(tmp_path / "out"))
    assert run.state is not None and run.state.is_completed()
    assert line in await _summary(run.id)


async def test_without_a_review_deployment_the_summary_says_the_review_was_not_started(
    tmp_path: Path,
) -> None:
    outcome = await evaluate(**_request(tmp_path / "out").flow_parameters())

    (note,) = [note for note in outcome.notes if "Review" in note]
    assert "not started" in note and f"no deployment {REVIEW_DEPLOYMENT}" in note
    assert f"agentflow-eval review {outcome.run_dir}" in note
    run = await flow_run_with(output_dir=str(tmp_path / "out"))
    assert run.state is not None and run.state.is_completed()
    summary = await _summary(run.id)
    assert "not started" in summary and "review/judges" in summary
