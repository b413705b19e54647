"""The two ways ``agentflow-eval run`` goes: as the ``evaluate`` flow (the default) and
``--no-prefect``, the same stages awaited in the command's process. They give the same
results.json for the demo example (but for ids and times), and the direct path never
imports Prefect, in a process of its own. The command keeps Prefect's client telemetry
off unless the user set it.

The direct path's other outputs: tests/unit/cli/test_no_prefect.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.cli import main

ROOT = Path(__file__).resolve().parents[2]
EVALSET = str(ROOT / "examples/weather/weather.evalset.json")
CONFIG = str(ROOT / "examples/weather/eval_config.json")
AGENT = "examples.weather.agent:agent"

_VARYING_KEYS = {"run_id"}
_VARYING_SUFFIXES = ("_at", "_ms", "duration_s")


def _without_ids_and_times(value: Any) -> Any:
    """``value`` with every id of the run and every clock reading left out."""
    if isinstance(value, dict):
        return {
            key: _without_ids_and_times(item)
            for key, item in value.items()
            if key not in _VARYING_KEYS and not key.endswith(_VARYING_SUFFIXES)
        }
    if isinstance(value, list):
        return [_without_ids_and_times(item) for item in value]
    return value


def _results(out: Path) -> dict[str, Any]:
    (run_dir,) = out.glob("*/*")
    return json.loads((run_dir / "results.json").read_text(encoding="utf-8"))


def test_the_flow_and_the_direct_path_give_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both paths read one judge cache (Prefect's local result storage), warmed first, so
    that the LLM judge's votes are alike: all served from it, none paid twice."""
    from prefect.settings import PREFECT_RESULTS_LOCAL_STORAGE_PATH, temporary_settings

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", list(sys.path))
    storage = tmp_path / "storage"
    monkeypatch.setenv("PREFECT_RESULTS_LOCAL_STORAGE_PATH", str(storage))
    common = ["run", AGENT, EVALSET, "--config", CONFIG, "--runs", "3", "--quiet"]
    assert main([*common, "--output", str(tmp_path / "warm"), "--no-prefect"]) == 0
    with temporary_settings(updates={PREFECT_RESULTS_LOCAL_STORAGE_PATH: storage}):
        assert main([*common, "--output", str(tmp_path / "flow")]) == 0
    assert main([*common, "--output", str(tmp_path / "direct"), "--no-prefect"]) == 0
    capsys.readouterr()
    flow, direct = _results(tmp_path / "flow"), _results(tmp_path / "direct")
    assert flow["run_id"] != direct["run_id"]
    assert len(flow["trials"]) == 6
    assert flow["totals"]["judge_calls"] == 0 and flow["totals"]["judge_cache_hits"] == 18
    assert _without_ids_and_times(direct) == _without_ids_and_times(flow)


_NO_PREFECT_PROCESS = """
import json, sys
from agentflow_eval.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "prefect": sorted(m for m in sys.modules if m == "prefect"
                  or m.startswith("prefect."))}))
"""


def test_the_direct_path_never_imports_prefect(tmp_path: Path) -> None:
    env = {**os.environ, "AGENTFLOW_EVAL_NO_PREFECT": "1"}
    env.pop("PREFECT_API_URL", None)
    result = subprocess.run(
        [
            *(sys.executable, "-c", _NO_PREFECT_PROCESS),
            *("run", AGENT, EVALSET, "--config", CONFIG, "--runs", "2", "--quiet"),
            *("--output", str(tmp_path / "out")),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    *scorecard, last = result.stdout.splitlines()
    assert json.loads(last) == {"code": 0, "prefect": []}
    assert scorecard[0].startswith("overall: ")
    assert (next((tmp_path / "out").glob("*/*")) / "report.html").is_file()


def test_prefects_client_telemetry_is_off_unless_the_user_set_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from prefect._internal.analytics import is_telemetry_enabled

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv("DO_NOT_TRACK", raising=False)
    monkeypatch.setattr("prefect._internal.analytics.enabled.is_ci_environment", lambda: False)
    assert is_telemetry_enabled()  # Prefect's default, outside CI
    run = ["run", AGENT, EVALSET, "--runs", "1", "--quiet", "--output", str(tmp_path)]
    assert main(run) == 0
    assert not is_telemetry_enabled()  # what Prefect's client reads before sending
    monkeypatch.setenv("DO_NOT_TRACK", "0")  # the user's choice is kept
    assert main(run) == 0
    assert os.environ["DO_NOT_TRACK"] == "0" and is_telemetry_enabled()
    capsys.readouterr()
