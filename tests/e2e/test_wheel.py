"""The wheel, built by pip: the installed distribution claims only the project's own
top-level name (flows/ and tasks/ install as ``agentflow_eval.flows`` and
``agentflow_eval.tasks``), with the package data beside the code. (What pyproject.toml
lists: tests/unit/test_packaging.py.)"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_NOT_SOURCES = (".git", ".venv", "build", "eval-results", "*.egg-info", "__pycache__", ".*cache")


@pytest.mark.e2e
def test_the_wheel_has_one_top_level_name(tmp_path: Path) -> None:
    # built from a copy: a build leaves a build/ folder beside the sources
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*_NOT_SOURCES))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("agentflow_eval-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"agentflow_eval"}
    assert "agentflow_eval/flows/evaluate.py" in names
    assert "agentflow_eval/tasks/run_trials.py" in names
    assert "agentflow_eval/examples/weather/weather.evalset.json" in names
    assert any(n.startswith("agentflow_eval/criteria/judges/prompts/") for n in names)
    assert any(n.startswith("agentflow_eval/report/templates/") for n in names)
