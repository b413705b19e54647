"""The machine's load is not the agent's fault: 300 trials of the example agent while
busy loops hold both cores (the example's first model call initialises LiteLLM, seconds
of work on a starved machine) end with no errored trial. The run goes through the same
trial stage and watchdog as the flow, without Prefect (``--no-prefect``) to keep it short."""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli_subprocess import command_in
from tests.support.prefect_server import ROOT

pytestmark = pytest.mark.e2e


def _spin() -> None:
    while True:
        pass


@pytest.fixture
def cpu_hog() -> Iterator[None]:
    hogs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(os.cpu_count() or 2)]
    for hog in hogs:
        hog.start()
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.join()


def test_300_trials_under_a_cpu_hog_have_no_errored_trial(tmp_path: Path, cpu_hog: None) -> None:
    run = command_in(tmp_path, "http://127.0.0.1:9/api", timeout_s=900)
    done = run(
        "run",
        "agentflow_eval.examples.weather.agent:agent",  # as installed
        str(ROOT / "examples/weather/weather.evalset.json"),
        "--config",
        str(ROOT / "examples/weather/eval_config.json"),
        "--runs",
        "150",
        "--no-prefect",
        "--output",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (results,) = (tmp_path / "out").glob("*/*/results.json")
    totals = json.loads(results.read_text())["totals"]
    assert totals["trials"] == 300
    assert totals["errored"] == 0, done.stdout
