"""The review flow on the flow tier's real Prefect API: it pauses on each sampled trial for
input, and the test answers each pause as the Prefect UI's Resume dialog does — it reads
the dialog's description and form schema from the flow run's inputs, and resumes the run
with the answer (``POST /flow_runs/{id}/resume`` with ``run_input``: the client's
``resume_flow_run(..., run_input=...)``). The run ends Completed with every label stored
beside the run and the review's artifact written; a review stopped midway is resumed by
the next one with the same sample; an answer outside the form's choices is refused by
the server and the run stays paused."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from prefect.client.orchestration import PrefectClient, get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    FlowFilter,
    FlowFilterName,
)
from prefect.client.schemas.objects import FlowRun
from prefect.client.schemas.responses import SetStateStatus
from prefect.exceptions import PrefectHTTPStatusError

from agentflow_eval.flows.review import review
from agentflow_eval.review.labels import Label, read_labels
from tests.support.review_runs import judged_run_folder

Answer = Callable[[str, dict[str, Any]], dict[str, Any]]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return judged_run_folder(tmp_path / "judged", scale=True)


async def _paused_run(run_dir: Path, seen: set[tuple[UUID, str]]) -> tuple[FlowRun, dict[str, str]]:
    """The review flow run of ``run_dir`` once it is paused at a pause not answered yet;
    with its input keys (description, schema, response)."""
    async with get_client() as client:
        while True:
            runs = await client.read_flow_runs(
                flow_filter=FlowFilter(name=FlowFilterName(any_=["review"]))
            )
            for run in runs:
                state = run.state
                if run.parameters.get("run") != str(run_dir) or state is None:
                    continue
                keyset = state.state_details.run_input_keyset
                if state.is_paused() and keyset and (run.id, keyset["response"]) not in seen:
                    return run, keyset
            await asyncio.sleep(0.2)


async def _form(
    client: PrefectClient, flow_run_id: UUID, keyset: dict[str, str]
) -> tuple[str, dict[str, Any]]:
    """The Resume dialog's description and form schema, as the UI reads them (the flow
    stores them a moment after it pauses)."""
    while True:
        try:
            schema = await client.read_flow_run_input(flow_run_id, keyset["schema"])
            description = await client.read_flow_run_input(flow_run_id, keyset["description"])
        except PrefectHTTPStatusError as exc:
            if exc.response.status_code != 404:
                raise
            await asyncio.sleep(0.1)
            continue
        return json.loads(description), json.loads(schema)


async def _answer_each_pause(
    run_dir: Path, flow: asyncio.Task[int], answer: Answer, *, most: int = 100
) -> list[str]:
    """Answer every pause of the review of ``run_dir`` until ``flow`` ends (or ``most``
    answers were given); the descriptions the dialog showed."""
    seen: set[tuple[UUID, str]] = set()
    shown: list[str] = []
    async with get_client() as client:
        while not flow.done() and len(shown) < most:
            waiting = asyncio.ensure_future(_paused_run(run_dir, seen))
            await asyncio.wait({waiting, flow}, return_when=asyncio.FIRST_COMPLETED)
            if not waiting.done():
                waiting.cancel()
                break
            run, keyset = waiting.result()
            text, schema = await _form(client, run.id, keyset)
            result = await client.resume_flow_run(run.id, run_input=answer(text, schema))
            assert result.status == SetStateStatus.ACCEPT, result.details
            seen.add((run.id, keyset["response"]))
            shown.append(text)
    return shown


def _judge_agrees(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The reviewer gives the judge's own verdict (its score, on a scale)."""
    choices = schema["properties"]["verdict"]["enum"]
    verdict = "pass" if "| **pass** |" in text else "fail"
    if "pass" not in choices:  # the rubric's scale: 5 for a pass, 2 for a fail
        verdict = "5" if verdict == "pass" else "2"
    return {"verdict": verdict, "note": "checked", "reviewer": "ann"}


async def _artifacts(flow_run_id: UUID) -> list[Any]:
    async with get_client() as client:
        return await client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
        )


async def test_a_review_pauses_on_each_sampled_trial_and_stores_each_answer(
    run_dir: Path,
) -> None:
    flow = asyncio.ensure_future(review(run=str(run_dir), size=2, reviewer="ann"))
    shown = await _answer_each_pause(run_dir, flow, _judge_agrees)
    given = await flow

    labels = read_labels(run_dir)
    assert given == len(labels) == len(shown) == 4  # two per criterion
    assert {label.criterion for label in labels} == {
        "final_response_match_v2",
        "response_evaluation_score",
    }
    assert all(label.reviewer == "ann" and label.note == "checked" for label in labels)
    # each label names its trial and the judged content, and says what the reviewer said
    results = json.loads((run_dir / "results.json").read_text())
    verdicts = {
        (t["trial"]["case_id"], t["trial"]["trial_index"], c["criterion"]): c
        for t in results["trials"]
        for c in t["criteria"]
    }
    for label in labels:
        judged = verdicts[(label.case_id, label.trial, label.criterion)]
        assert label.content_key == judged["details"]["content_key"]
        if label.criterion == "final_response_match_v2":
            assert label.label == ("pass" if judged["status"] == "passed" else "fail")
        else:
            assert label.label == (5.0 if judged["status"] == "passed" else 2.0)
    # what the dialog showed: the trial, the conversation with its tool call, the
    # answer and reference, the criterion, the judge's verdict and reasoning
    assert [text.split("\n", 1)[0].split(":")[0] for text in shown] == [
        f"## {n} of 4" for n in range(1, 5)
    ]
    first = shown[0]
    for needle in ("get_weather", "New York", "**Reference**"):
        assert needle in first
    assert "### The judge" in first and "demo judge" in first
    (flow_run,) = [
        r for r in await _review_runs(run_dir) if r.state is not None and r.state.is_completed()
    ]
    (artifact,) = [a for a in await _artifacts(flow_run.id) if a.type == "markdown"]
    assert "Review of run" in str(artifact.data) and "ann" in str(artifact.data)
    # the judges measured against the labels, written into the run's results (the
    # reviewer agreed with every verdict it labelled: both of the judge's verdicts of
    # final_response_match_v2, all agreed)
    results = json.loads((run_dir / "results.json").read_text())
    by_criterion = {entry["criterion"]: entry for entry in results["judge_agreement"]}
    assert set(by_criterion) == {"final_response_match_v2", "response_evaluation_score"}
    match = by_criterion["final_response_match_v2"]
    assert match["labels"] == 2 and match["reviewers"] == ["ann"]
    assert match["agreement"]["value"] == 1.0
    assert "Judges against people" in str(artifact.data)
    assert "| Agreement |" in str(artifact.data) and "100% (" in str(artifact.data)
    # and kept in the label bank of the output folder, for later runs
    banked = list((run_dir.parent.parent / "label-bank").glob("*/*.jsonl"))
    assert len(banked) == 4


async def _review_runs(run_dir: Path) -> list[FlowRun]:
    async with get_client() as client:
        runs = await client.read_flow_runs(
            flow_filter=FlowFilter(name=FlowFilterName(any_=["review"]))
        )
    return [run for run in runs if run.parameters.get("run") == str(run_dir)]


def _key(label: Label) -> tuple[str, int, str]:
    return (label.case_id, label.trial, label.criterion)


def _as(reviewer: str) -> Answer:
    def answer(text: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {**_judge_agrees(text, schema), "reviewer": reviewer}

    return answer


async def test_a_review_stopped_midway_is_resumed_by_the_next_with_the_trials_left(
    run_dir: Path,
) -> None:
    # no answer within the wait (two seconds here): the review stops, Failed
    flow = asyncio.ensure_future(
        review(run=str(run_dir), size=2, reviewer="ann", wait_hours=0.0005)
    )
    first = await _answer_each_pause(run_dir, flow, _judge_agrees, most=2)
    with pytest.raises(Exception, match="paused and never resumed"):
        await flow
    assert len(first) == 2 and len(read_labels(run_dir)) == 2

    flow = asyncio.ensure_future(review(run=str(run_dir), size=2, reviewer="ann"))
    rest = await _answer_each_pause(run_dir, flow, _judge_agrees)
    assert await flow == 2
    # the same sample, only the trials left asked
    assert [text.split(":")[0] for text in first + rest] == [f"## {n} of 4" for n in range(1, 5)]
    labels = read_labels(run_dir)
    assert len(labels) == 4 and len({_key(label) for label in labels}) == 4


async def test_several_reviewers_label_the_same_trials(run_dir: Path) -> None:
    for reviewer in ("ann", "bob"):
        flow = asyncio.ensure_future(review(run=str(run_dir), size=2, reviewer=reviewer))
        await _answer_each_pause(run_dir, flow, _as(reviewer))
        assert await flow == 4
    labels = read_labels(run_dir)
    by = {name: {_key(lab) for lab in labels if lab.reviewer == name} for name in ("ann", "bob")}
    assert len(by["ann"]) == 4 and by["ann"] == by["bob"]


async def test_an_answer_outside_the_forms_choices_is_refused_and_the_review_waits(
    run_dir: Path,
) -> None:
    flow = asyncio.ensure_future(review(run=str(run_dir), size=1, reviewer="ann"))
    run, _ = await _paused_run(run_dir, set())
    async with get_client() as client:
        refused = await client.resume_flow_run(
            run.id, run_input={"verdict": "maybe", "reviewer": "ann"}
        )
        assert refused.status == SetStateStatus.REJECT
        assert "maybe" in str(refused.details)
        still = await client.read_flow_run(run.id)
        assert still.state is not None and still.state.is_paused()
    await _answer_each_pause(run_dir, flow, _judge_agrees)
    assert await flow == 2
    assert len(read_labels(run_dir)) == 2
