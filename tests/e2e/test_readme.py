"""The README's sample output is the real command's: the scorecard the example prints
and the usage line of ``agentflow-eval run``, regenerated here so they cannot drift (the
example runs on the session's Prefect server, tests/e2e/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.markdown_doc import Block, blocks_of, normalise

from tests.support.prefect_server import PrefectServer

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def sample(name: str) -> Block:
    blocks = blocks_of((ROOT / "README.md").read_text(encoding="utf-8"))
    [block] = [b for b in blocks if ("sample", name) in b.directives]
    return block


def test_the_sample_scorecard_is_what_the_example_prints(
    tmp_path: Path, shared_prefect: PrefectServer
) -> None:
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect"),  # a first run: an empty judge cache
        "PREFECT_API_URL": shared_prefect.api_url,
        "PYTHONPATH": str(ROOT),
    }
    result = subprocess.run(  # what scripts/run-example.sh runs
        [
            str(Path(sys.executable).parent / "agentflow-eval"),
            *("run", "examples.weather.agent:agent"),
            str(ROOT / "examples/weather/weather.evalset.json"),
            *("--config", str(ROOT / "examples/weather/eval_config.json")),
            *("--output", "eval-results"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert normalise(result.stdout) == normalise(sample("example-scorecard").text), (
        "README.md's sample scorecard is stale; the example prints:\n" + result.stdout
    )


def test_the_usage_line_is_the_parsers() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "agentflow_eval.cli", "run", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
        timeout=120,
    )
    usage = result.stdout.split("\n\n")[0]
    assert normalise(usage) == normalise(sample("run-usage").text), (
        "README.md's usage block is stale; `agentflow-eval run --help` says:\n" + usage
    )
