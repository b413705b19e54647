"""Scoring production traces in the test's process: a config of reference-free criteria
that need no judge (a trace that called a tool fails ``within_budget``), and
``score(source, out, **settings)``, a batch run by the one call."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.cli.early import NO_PREFECT_ENV
from agentflow_eval.models.traces_request import TracesRequest
from agentflow_eval.pipeline.score_traces import TracesOutcome, score_traces
from tests.support.cli_in_process import CliResult, run_cli

ROOT = Path(__file__).resolve().parents[3]

Score = Callable[..., TracesOutcome]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """No tool call allowed: a trace that called one fails."""
    path = tmp_path / "traces_config.json"
    path.write_text(json.dumps({"criteria": {"within_budget": {"max_tool_calls": 0}}}))
    return path


@pytest.fixture
def score(config: Path) -> Score:
    def run(source: Path | str, out: Path, **settings: Any) -> TracesOutcome:
        request = TracesRequest.model_validate(
            {"source": str(source), "config": str(config), "output_dir": str(out), **settings}
        )
        return asyncio.run(score_traces(request))

    return run


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """``cli(*args) -> CliResult``: ``agentflow-eval ARGS`` in this process."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv(NO_PREFECT_ENV, raising=False)
    monkeypatch.setenv("PREFECT_RESULTS_LOCAL_STORAGE_PATH", str(tmp_path / "storage"))

    def run(*args: str) -> CliResult:
        return run_cli(capsys, *args)

    return run


def trial_lines(outcome: TracesOutcome) -> list[dict[str, Any]]:
    """Every trial the batch's runs judged."""
    lines = []
    for scored in outcome.versions:
        with (scored.outcome.run_dir / "judged.jsonl").open() as handle:
            lines += [json.loads(line) for line in handle if line.strip()]
    return lines


def scored_trace_ids(outcome: TracesOutcome) -> list[str]:
    """The trace ids the batch recorded, one per trial (repeats kept)."""
    ids = []
    for version in outcome.intake.versions:
        with (Path(version.folder) / "traces.jsonl").open() as handle:
            ids += [json.loads(line)["trace_id"] for line in handle if line.strip()]
    return ids
