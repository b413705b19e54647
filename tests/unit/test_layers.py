"""Layers point one way: import-linter's contracts (pyproject.toml, [tool.importlinter])
hold for the package as it installs, flows/ and tasks/ included."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.layout import ROOT, installed_layout


def test_the_import_contracts_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from importlinter.application.use_cases import SUCCESS, lint_imports
    from importlinter.configuration import configure

    monkeypatch.syspath_prepend(str(installed_layout(tmp_path)))
    loaded = [m for m in sys.modules if m == "agentflow_eval" or m.startswith("agentflow_eval.")]
    for module in loaded:  # grimp finds the package through the import system
        monkeypatch.delitem(sys.modules, module)
    configure()  # what the lint-imports command sets up before it reads the config
    passed = lint_imports(str(ROOT / "pyproject.toml"), cache_dir=None, no_logo=True)
    report = capsys.readouterr().out
    assert passed == SUCCESS, report
    assert "0 broken" in report and "Layers point one way KEPT" in report
