"""Production traces of a real agent: a Pydantic AI agent instrumented with the
OpenTelemetry SDK (two deployed versions, each its own resource), its spans written by
the SDK's OTLP encoder into the layout the Collector's S3 exporter writes, then scored:
each version in a run of its own, each trace's trajectory read as the adapters read a
trial's (tool calls with arguments and results, model calls with usage, the agent as a
step), and the trace where the agent failed added as a candidate case."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common")
pytest.importorskip("pydantic_ai")

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agentflow_eval.files.loading import load_evalset
from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.models.traces_request import TracesRequest
from agentflow_eval.pipeline.score_traces import score_traces
from agentflow_eval.testing import ScriptedOpenAIServer
from tests.frameworks.test_otel import WEATHER, pydantic_weather_agent, weather_model
from tests.support.collector_exporter import CollectorLayoutExporter


def _provider(version: str, exporter: CollectorLayoutExporter) -> TracerProvider:
    resource = Resource.create({"service.name": "weather-agent", "service.version": version})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def test_an_instrumented_agents_production_traces_are_scored_per_version(
    tmp_path: Path,
) -> None:
    bucket = tmp_path / "bucket"
    exporter = CollectorLayoutExporter(bucket)
    asked = {"2.0.0": ["What's the weather in Tokyo?", "And in Paris?"],
             "2.1.0": ["Weather in London?", "What about Atlantis?"]}  # fmt: skip

    async def production() -> None:
        with ScriptedOpenAIServer(handler=weather_model) as server:
            for version, questions in asked.items():
                agent = pydantic_weather_agent(
                    server.url, tracer_provider=_provider(version, exporter)
                )
                for question in questions:
                    with contextlib.suppress(RuntimeError):  # no weather for Atlantis
                        await agent(question, [])

    asyncio.run(production())
    assert len(exporter.written) == 4 and all("year=" in str(p) for p in exporter.written)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"within_budget": {"max_tool_calls": 1}}}))
    request = TracesRequest(
        source=str(bucket),
        config=str(config),
        output_dir=str(tmp_path / "out"),
        candidates_to=str(tmp_path / "production.evalset.json"),
    )

    outcome = asyncio.run(score_traces(request))

    assert outcome.intake.counts.traces == 4 and outcome.intake.counts.problems == 0
    runs = {
        v.recording.agent_version: read_results_json(v.outcome.run_dir / "results.json")
        for v in outcome.versions
    }
    assert {v: (r.totals.trials, r.totals.passed) for v, r in runs.items()} == {
        "2.0.0": (2, 2),
        "2.1.0": (2, 1),
    }
    judged = [
        json.loads(line)
        for v in outcome.versions
        for line in (v.outcome.run_dir / "judged.jsonl").read_text().splitlines()
    ]
    by_question = {j["trial"]["turns"][0]["user_text"]: j for j in judged}
    tokyo = by_question["What's the weather in Tokyo?"]["trial"]["turns"][0]
    kinds = [e["kind"] for e in tokyo["events"]]
    assert kinds == ["node", "model_call", "tool_call", "model_call"]
    (call,) = [e["call"] for e in tokyo["events"] if e["kind"] == "tool_call"]
    assert call["name"] == "get_weather" and call["args"] == {"location": "Tokyo"}
    assert call["result"] == {"location": "Tokyo", "condition": WEATHER["Tokyo"]}
    usage = [e["usage"] for e in tokyo["events"] if e["kind"] == "model_call"]
    assert [(u["prompt_tokens"], u["completion_tokens"]) for u in usage] == [(10, 5), (10, 5)]
    assert tokyo["final_response"] == f"Tokyo is {WEATHER['Tokyo']}."
    atlantis = by_question["What about Atlantis?"]
    assert atlantis["status"] == "errored"
    assert "weather service down for Atlantis" in atlantis["trial"]["error"]["message"]
    (candidate,) = load_evalset(tmp_path / "production.evalset.json").eval_set.eval_cases
    assert candidate.conversation[0].user_content.text == "What about Atlantis?"
    assert candidate.metadata["agent_version"] == "2.1.0"
    assert candidate.metadata["trace_id"] == atlantis["trial"]["case_id"]
