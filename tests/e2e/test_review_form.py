"""People review a run's judges in the Prefect UI: prefect.yaml's review deployment on a
real server with a process worker, a review started as a person starts it (`prefect
deployment run review/judges`), and each sampled trial answered in the flow run's Resume
dialog in headless Chromium — the trial read there (the case, the tool call, the answer
and reference, the judge's verdict and reasoning), the verdict chosen from its pick-list
(pass or fail; the 1-to-5 scale for ADK's coherence judge), a note and the reviewer's
name typed, Submit pressed. The run ends Completed with the labels beside the run and
the judges' agreement in its results.

The screenshot of the filled-in dialog is docs/review-form.png:
AGENTFLOW_REVIEW_FORM_SCREENSHOT=docs/review-form.png writes it there when the form
changes. The server is the session's (tests/e2e/conftest.py)."""

from __future__ import annotations

import asyncio
import json
import os
import warnings
from pathlib import Path
from uuid import UUID

import pytest
from prefect.client.orchestration import PrefectClient
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterDeploymentId
from prefect.client.schemas.objects import FlowRun

from agentflow_eval.review.labels import read_labels
from tests.support.cdp import DevToolsPage, open_page
from tests.support.chromium import chromium_binary, png_size
from tests.support.prefect_server import (
    PrefectServer,
    deployable_copy,
    prefect_cli,
    process_worker,
)
from tests.support.resume_form import ResumeDialog
from tests.support.review_runs import judged_run_folder

pytestmark = pytest.mark.e2e
POOL = "e2e-review-form"
SHOT_HEIGHT = 2200


async def _paused(api_url: str, deployment: str, after: str | None) -> tuple[FlowRun, str]:
    """The review's flow run once it is paused at a pause other than ``after`` (its
    response key), with that pause's key."""
    async with PrefectClient(api=api_url) as client:
        target = await client.read_deployment_by_name(deployment)
        of_deployment = FlowRunFilter(deployment_id=FlowRunFilterDeploymentId(any_=[target.id]))
        for _ in range(600):
            (run,) = await client.read_flow_runs(flow_run_filter=of_deployment)
            state = run.state
            keyset = state.state_details.run_input_keyset if state is not None else None
            if state is not None and state.is_paused() and keyset and keyset["response"] != after:
                return run, keyset["response"]
            if state is not None and state.is_final():
                raise AssertionError(f"the review ended {state.type.value}: {state.message}")
            await asyncio.sleep(0.5)
    raise AssertionError("the review never paused for input")


async def _final(api_url: str, flow_run_id: UUID) -> FlowRun:
    async with PrefectClient(api=api_url) as client:
        for _ in range(240):
            run = await client.read_flow_run(flow_run_id)
            if run.state is not None and run.state.is_final():
                return run
            await asyncio.sleep(0.5)
    raise AssertionError("the review did not end")


async def _answer(page: DevToolsPage, position: int, shot: Path | None) -> tuple[str, str]:
    """Answer the trial the dialog shows at ``position`` of 2 (the first: the judge was
    wrong to pass it, or a 2 on the scale; the second: a pass, or a 4); the dialog's
    text and the note typed."""
    dialog = ResumeDialog(page)
    text = await dialog.open(f"{position} of 2", "Your verdict", timeout_s=120)
    options = await dialog.options("Your verdict")
    assert "skip" in options, options
    scale = "pass" not in options
    if scale:
        assert options == ["1", "2", "3", "4", "5", "skip"]
    assert await dialog.value("Reviewer") == "ann"  # the flow's reviewer, filled in
    choice = ("2" if scale else "fail") if position == 1 else ("4" if scale else "pass")
    note = f"trial {position}: {choice}"
    await dialog.choose("Your verdict", choice)
    await dialog.type_into("Note", note)
    await dialog.type_into("Reviewer", "carol")
    if shot is not None:
        await page.screenshot(shot, height=SHOT_HEIGHT)
        width, height = png_size(shot)
        assert width >= 1000 and height >= 1200
    try:
        await dialog.submit()
    except AssertionError as first:
        # under load the UI has once shown "Something went wrong" and kept the dialog
        # open; a person presses Submit again (a second failure fails the test, with
        # what the server answered each time)
        warnings.warn(f"Submit pressed again: {first}", stacklevel=1)
        await dialog.submit()
    return text, note


def test_a_reviewer_answers_each_trial_in_the_prefect_ui(
    tmp_path: Path, shared_prefect: PrefectServer
) -> None:
    browser = chromium_binary()
    run_dir = judged_run_folder(tmp_path / "judged", cases=2, scale=True)
    home = tmp_path / "home"
    home.mkdir()
    project = deployable_copy(tmp_path / "project", POOL)
    api_url = shared_prefect.api_url
    shot = Path(os.environ.get("AGENTFLOW_REVIEW_FORM_SCREENSHOT", tmp_path / "review-form.png"))
    prefect_cli(home, api_url, "work-pool", "create", POOL, "--type", "process", cwd=project)
    prefect_cli(home, api_url, "deploy", "--name", "judges", cwd=project)
    params = ["--param", f"run={run_dir}", "--param", "size=1", "--param", "reviewer=ann"]
    prefect_cli(home, api_url, "deployment", "run", "review/judges", *params, cwd=project)

    async def review() -> tuple[list[tuple[str, str]], FlowRun]:
        run, first = await _paused(api_url, "review/judges", None)
        url = f"{api_url.removesuffix('/api')}/runs/flow-run/{run.id}"
        async with open_page(browser, tmp_path / "profile", url) as page:
            # the window the screenshot is taken in, from the start: the app lays itself
            # out again when the window changes, and a form laid out again loses its input
            await page.call(
                "Emulation.setDeviceMetricsOverride",
                width=1280,
                height=SHOT_HEIGHT,
                deviceScaleFactor=1,
                mobile=False,
            )
            answered = [await _answer(page, 1, shot)]
            await _paused(api_url, "review/judges", first)
            await page.call("Page.navigate", url=url)  # the page as the reviewer reloads it
            answered.append(await _answer(page, 2, None))
        return answered, await _final(api_url, run.id)

    with process_worker(home, api_url, POOL, project) as worker_log:
        answered, run = asyncio.run(review())
        assert run.state is not None and run.state.is_completed(), worker_log.read_text()[-3000:]

    # what the dialog showed: the trial, its tool call, the answer and reference, the
    # criterion and the judge's verdict and reasoning
    for text, _ in answered:
        for needle in ("new_york_", "get_weather", "Reference", "The judge", "demo judge"):
            assert needle in text, (needle, text)
    labels = read_labels(run_dir)
    assert {label.reviewer for label in labels} == {"carol"}
    given = {label.note: label.label for label in labels}
    expected = {note: note.rpartition(": ")[2] for _, note in answered}
    assert given == {
        note: float(value) if value.isdigit() else value for note, value in expected.items()
    }
    results = json.loads((run_dir / "results.json").read_text())
    measured = {entry["criterion"] for entry in results["judge_agreement"]}
    assert measured == {label.criterion for label in labels}
