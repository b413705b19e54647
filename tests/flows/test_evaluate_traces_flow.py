"""The evaluate-traces flow under Prefect: its parameters are the traces request's (a
form with titles and no nulls); a run reads the new traces in its read-traces task and
scores each agent version in a run of the evaluate flow, says what it did in an
artifact, and a second run reads nothing again."""

from __future__ import annotations

import asyncio
import fnmatch
import inspect
import json
from pathlib import Path

import yaml
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterKey,
    FlowRunFilter,
    FlowRunFilterParentTaskRunId,
)
from prefect.server.utilities.user_templates import render_user_template_sync
from prefect.testing.fixtures import asserting_events_worker  # noqa: F401 (a fixture)
from prefect.utilities.callables import parameter_schema

from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.flows.evaluate_traces import evaluate_traces
from agentflow_eval.models.traces_request import TracesRequest
from tests.support.otlp_traces import BASE_NS, AgentTrace, export_request, write_s3_layout
from tests.support.prefect_records import task_runs_of

ROOT = Path(__file__).resolve().parents[2]


def test_the_flow_takes_exactly_the_requests_fields_with_the_same_defaults() -> None:
    signature = inspect.signature(evaluate_traces.fn)
    assert list(signature.parameters) == list(TracesRequest.model_fields)
    blank = TracesRequest(source="s3://b/p", config="c.json")
    for name, parameter in signature.parameters.items():
        if name in ("source", "config"):
            assert parameter.default is inspect.Parameter.empty
        else:
            assert parameter.default == getattr(blank, name), name
    schema = parameter_schema(evaluate_traces.fn).model_dump()
    assert schema["required"] == ["source", "config"]
    for name, prop in schema["properties"].items():
        assert prop.get("title") or "$ref" in prop, name
        assert "anyOf" not in prop, f"{name} would render as a type switch"
        assert prop.get("default", "") is not None, f"{name} has a null default"
    assert schema["properties"]["sample_rate"]["default"] == 1.0
    assert schema["properties"]["version_attribute"]["default"] == "service.version"


async def test_a_flow_run_scores_each_version_in_an_evaluate_run_and_reads_once(
    tmp_path: Path,
) -> None:
    source, out = tmp_path / "traces", tmp_path / "out"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"within_budget": {"max_tool_calls": 0}}}))
    old = [AgentTrace(f"old-{n}", version="1.4.0", tool=None) for n in range(4)]
    new = [AgentTrace(f"new-{n}", version="1.5.0") for n in range(3)]  # each calls a tool
    write_s3_layout(source, [export_request(old[:2] + new[:1]), export_request(old[2:] + new[1:])])
    request = TracesRequest(source=str(source), config=str(config), output_dir=str(out))

    outcome = await evaluate_traces(**request.flow_parameters())
    again = await evaluate_traces(**request.flow_parameters())

    pass_rates = {
        v.recording.agent_version: read_results_json(v.outcome.run_dir / "results.json")
        for v in outcome.versions
    }
    assert {v: r.totals.pass_rate for v, r in pass_rates.items()} == {"1.4.0": 1.0, "1.5.0": 0.0}
    assert {v: r.agent_version for v, r in pass_rates.items()} == {
        "1.4.0": "1.4.0",
        "1.5.0": "1.5.0",
    }
    assert all("window_start" in r.labels for r in pass_rates.values())
    assert outcome.candidates_added == 3
    assert again.intake.counts.objects_read == 0 and not again.versions

    assert outcome.batch_dir.name.startswith("flow-run-")  # a retry resumes it
    async with get_client() as client:
        flow_run = await client.read_flow_run(outcome.batch_dir.name.removeprefix("flow-run-"))
    assert flow_run.parameters["source"] == str(source)
    runs = await task_runs_of(flow_run, until=lambda runs: len(runs) >= 3)
    names = sorted(run.name.rsplit("-", 1)[0] for run in runs)
    assert names.count("read-traces") == 1
    async with get_client() as client:
        children = await client.read_flow_runs(
            flow_run_filter=FlowRunFilter(
                parent_task_run_id=FlowRunFilterParentTaskRunId(any_=[r.id for r in runs])
            )
        )
        (artifact,) = await client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["traces-scored"])),
            flow_run_filter=FlowRunFilter(id={"any_": [flow_run.id]}),
        )
    assert sorted(child.parameters["rejudge_from"].rsplit("/", 1)[-1] for child in children) == [
        "1.4.0",
        "1.5.0",
    ]
    assert "7 agent trace(s), 7 scored" in artifact.data
    assert "3 failing trace(s) added as candidate cases" in artifact.data


async def test_a_drop_between_versions_is_emitted_as_a_regression_event(
    tmp_path: Path,
    asserting_events_worker,  # noqa: F811
) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"within_budget": {"max_tool_calls": 0}}}))
    minute = 60_000_000_000
    old = [
        AgentTrace(f"v1-{n}", version="1.0", tool=None, start_ns=BASE_NS + n * minute)
        for n in range(20)
    ]
    new = [
        AgentTrace(
            f"v2-{n}",
            version="2.0",
            tool=None if n < 6 else "get_weather",
            start_ns=BASE_NS + (100 + n) * minute,
        )
        for n in range(20)
    ]
    write_s3_layout(tmp_path / "traces", [export_request(old), export_request(new)])
    request = TracesRequest(
        source=str(tmp_path / "traces"), config=str(config), output_dir=str(tmp_path / "out")
    )

    outcome = await evaluate_traces(**request.flow_parameters())

    await asyncio.to_thread(asserting_events_worker.wait_until_empty)
    regressed = [
        e for e in asserting_events_worker._client.events if e.event == "agentflow.eval.regressed"
    ]
    assert len(regressed) == 1
    (event,) = regressed
    new_run = outcome.versions[1].outcome.run
    assert event.resource.id == f"agentflow.eval-set.{new_run.eval_set_id}"
    assert event.payload["agent_version"] == "2.0"
    assert event.payload["run_id"] == new_run.run_id
    assert event.payload["regressed_cases"] == [
        {
            "case_id": "all traces",
            "baseline": "20/20",
            "candidate": "6/20",
            "change": -0.7,
            "p_adjusted": event.payload["regressed_cases"][0]["p_adjusted"],
        }
    ]
    assert event.payload["regressed_cases"][0]["p_adjusted"] < 0.001

    # the shipped automation routes it: its trigger matches the event, and its message
    # (rendered as Prefect renders it) names the version, the one before and the drop
    automation = yaml.safe_load(
        (ROOT / "deployments/automations/regressed-webhook.yaml").read_text()
    )
    trigger = automation["trigger"]
    assert event.event in trigger["expect"]
    assert fnmatch.fnmatchcase(event.resource.id, trigger["match"]["prefect.resource.id"])
    text = json.loads(
        render_user_template_sync(automation["actions"][0]["payload"], {"event": event})
    )["text"]
    assert f"({new_run.agent} 2.0 against agent version 1.0)" in text
    assert "all traces 20/20 -> 6/20" in text


async def test_a_published_drop_reaches_the_trend_page_through_a_publish_task(
    tmp_path: Path,
) -> None:
    """The comparison with the version before is made after each version's evaluate run
    published it: the run is published again in a task run of the traces flow (nothing
    runs outside a task run Prefect shows), and the trend page names the test."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"within_budget": {"max_tool_calls": 0}}}))
    minute = 60_000_000_000
    old = [
        AgentTrace(f"v1-{n}", version="1.0", tool=None, start_ns=BASE_NS + n * minute)
        for n in range(12)
    ]
    new = [
        AgentTrace(f"v2-{n}", version="2.0", start_ns=BASE_NS + (100 + n) * minute)
        for n in range(12)
    ]
    write_s3_layout(tmp_path / "traces", [export_request(old), export_request(new)])
    request = TracesRequest(
        source=str(tmp_path / "traces"),
        config=str(config),
        output_dir=str(tmp_path / "out"),
        publish_to=str(tmp_path / "published"),
    )

    outcome = await evaluate_traces(**request.flow_parameters())

    async with get_client() as client:
        flow_run = await client.read_flow_run(outcome.batch_dir.name.removeprefix("flow-run-"))
    runs = await task_runs_of(flow_run, until=lambda runs: len(runs) >= 4)
    names = [run.name.rsplit("-", 1)[0] for run in runs]
    assert names.count("publish") == 1  # the second version's run, with its comparison
    page = (tmp_path / "published" / "traces-traces" / "trend.html").read_text()
    assert page.count('class="dropped"') == 1
    assert "Boschloo&#39;s exact test" in page or "Fisher&#39;s exact test" in page
