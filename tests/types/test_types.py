"""Types are checked: mypy, strict (pyproject.toml, [tool.mypy]), finds nothing in the
package as it installs, the Prefect front doors included.

A check of its own (tests/types), not a core test: mypy reads the whole package and its
dependencies in one go, and the parallel core tier would end waiting on that one test;
scripts/test.sh runs it beside the tiers instead, and fails if it found anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.layout import ROOT, installed_layout


def test_mypy_strict_finds_nothing(tmp_path: Path) -> None:
    layout = tmp_path / "layout"
    layout.mkdir()
    installed_layout(layout)
    # mypy in a process of its own: in this one, its module-level caches would outlive the
    # check, and pytest's garbage collection at exit would walk them for as long again.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-error-summary",
            str(layout / "agentflow_eval"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
