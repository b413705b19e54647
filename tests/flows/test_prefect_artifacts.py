"""Prefect UI artifacts, created inside real flow runs and read back through the API (the
flow tier's Prefect API, shared with the other tests: each reads back what its own flow
run made)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    ArtifactFilterKey,
)
from prefect.context import get_run_context
from support.efficiency_sim import slower_and_diverged
from support.sample_results import sample_run

from agentflow_eval.models.results import RunResult
from agentflow_eval.tasks.support.artifacts import (
    ProgressReporter,
    artifact_keys,
    cases_table,
    publish_run_artifacts,
    summary_markdown,
)

KEY = re.compile(r"^[a-z0-9-]+$")


@pytest.fixture(scope="module")
def run() -> RunResult:
    return sample_run()[0]


async def artifacts_with_key(key: str, flow_run_id: str | None = None) -> list[Any]:
    """Every version of the artifact ``key`` (of one flow run's, if given)."""
    by_run = ArtifactFilterFlowRunId(any_=[flow_run_id]) if flow_run_id else None
    async with get_client() as client:
        return await client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key]), flow_run_id=by_run)
        )


def test_keys_follow_prefects_rule() -> None:
    keys = artifact_keys("Weather Agent_Basic.Tests/v2 ü")
    assert keys.cases == "weather-agent-basic-tests-v2-cases"
    for key in (keys.cases, keys.summary, keys.report, keys.progress):
        assert KEY.match(key), key
    assert artifact_keys("___").cases == "agentflow-eval-cases"
    assert len(artifact_keys("x" * 500).summary) <= 100


def test_cases_table_has_a_row_per_case_with_criterion_means(run: RunResult) -> None:
    rows = cases_table(run)
    assert [r["case"] for r in rows] == [c.case_id for c in run.cases]
    multi = rows[1]
    assert multi["passed"] == "3/5" and multi["pass rate"] == 0.6 and multi["state"] == "flaky"
    assert multi["trajectory IN_ORDER (mean)"] == 0.8
    assert multi["95% CI"] == "23–88%"


def test_summary_escapes_run_data(run: RunResult) -> None:
    hostile = run.model_copy(deep=True)
    hostile.cases[4].case_id = "evil | <img src=x onerror=alert(1)> [x](javascript:alert(1))"
    text = summary_markdown(hostile, "https://reports.example/r/report.html")
    assert not re.search(r"(?<!\\)[<\[]", text.split("## Failing")[1])  # nothing unescaped
    # no tag can open, no link can form, the table cell cannot end early
    assert r"evil \| \<img src=x onerror=alert(1)> \[x\](javascript:alert(1))" in text
    assert "**50%** of 30 trials passed (95% CI 33–67%)" in text
    assert "(<https://reports.example/r/report.html>)" in text
    assert "## Failing or flaky cases (4)" in text


async def test_run_artifacts_are_attached_to_the_flow_run(
    prefect_api: None, run: RunResult
) -> None:
    @flow
    async def report_flow() -> tuple[str, Any]:
        created = await publish_run_artifacts(run, "https://reports.example/r/report.html")
        return str(get_run_context().flow_run.id), created  # type: ignore[union-attr]

    flow_run_id, created = await report_flow()
    keys = artifact_keys(run.eval_set_id)

    (table,) = await artifacts_with_key(keys.cases, flow_run_id)
    assert table.id == created.cases and table.type == "table"
    assert str(table.flow_run_id) == flow_run_id
    assert json.loads(table.data) == cases_table(run)

    (summary,) = await artifacts_with_key(keys.summary, flow_run_id)
    assert summary.type == "markdown" and "**50%** of 30 trials passed" in summary.data
    assert summary.description == "Travel agent — nightly: 50% of 30 trials passed"

    (link,) = await artifacts_with_key(keys.report, flow_run_id)
    assert link.id == created.report
    assert "(https://reports.example/r/report.html)" in link.data


async def test_a_compared_runs_summary_shows_efficiency_and_divergence(
    prefect_api: None,
) -> None:
    candidate, record = slower_and_diverged()

    @flow
    async def compared_flow() -> str:
        await publish_run_artifacts(candidate, None, comparison=record)
        return str(get_run_context().flow_run.id)  # type: ignore[union-attr]

    flow_run_id = await compared_flow()
    (summary,) = await artifacts_with_key(artifact_keys(candidate.eval_set_id).summary, flow_run_id)
    lines = summary.data.splitlines()
    slower = next(line for line in lines if line.startswith("- efficiency: c0: latency"))
    assert "Wilcoxon signed-rank p (Holm)" in slower
    assert slower.endswith(": slower, beyond the 25% tolerated")
    assert any(
        line.startswith("- diverged: c3 (regression): tools: step 2: refund 0/30 → 18/30")
        for line in lines
    )


async def test_no_report_url_means_no_link(prefect_api: None, run: RunResult) -> None:
    other = run.model_copy(update={"eval_set_id": "no-link-set"})

    @flow
    async def report_flow() -> Any:
        return await publish_run_artifacts(other, None)

    created = await report_flow()
    assert created.report is None
    assert await artifacts_with_key(artifact_keys("no-link-set").report) == []


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_progress_is_throttled_by_step_and_time_and_ends_at_100(prefect_api: None) -> None:
    clock = FakeClock()

    @flow
    async def trials_flow() -> ProgressReporter:
        progress = ProgressReporter.for_eval_set("progress-set", clock=clock)
        await progress.start(200)
        for _ in range(200):  # fast trials: no time passes, only 5% steps are sent
            progress.advance()
            await progress.flush()  # as if the loop ran other trials meanwhile
        await progress.finish()
        return progress

    progress = await trials_flow()
    assert 10 <= progress.updates_sent <= 21
    (artifact,) = await artifacts_with_key(artifact_keys("progress-set").progress)
    assert artifact.id == progress.artifact_id and artifact.type == "progress"
    assert float(artifact.data) == 100.0


async def test_slow_progress_is_sent_once_per_interval(prefect_api: None) -> None:
    clock = FakeClock()

    @flow
    async def slow_flow() -> ProgressReporter:
        progress = ProgressReporter("slow-progress", "slow", min_interval_s=1.0, clock=clock)
        await progress.start(1000)
        for done in range(1, 11):  # 0.1% steps, each after 0.5 s: every other one is due
            clock.now += 0.5
            progress.update(done)
            await progress.flush()  # as if the loop ran other trials meanwhile
        sent_before_finish = progress.updates_sent
        await progress.finish()
        assert progress.updates_sent == sent_before_finish  # 10/1000 was already sent
        return progress

    progress = await slow_flow()
    assert progress.updates_sent == 5
    (artifact,) = await artifacts_with_key("slow-progress")
    assert float(artifact.data) == pytest.approx(1.0)


async def test_progress_needs_start_and_sane_totals(prefect_api: None) -> None:
    progress = ProgressReporter("never-started", "x")
    with pytest.raises(RuntimeError, match=r"update\(\) before start\(\)"):
        progress.update(1)
    with pytest.raises(ValueError, match="0 <= done <= total, got done=5, total=3"):
        await progress.start(3, done=5)
