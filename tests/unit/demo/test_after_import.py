"""The demo plugin waits for LiteLLM's import instead of causing it: a function runs
right after a module's first import, whoever imports it, once; at once if the module is
already loaded."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from agentflow_eval.demo.after_import import after_import


@pytest.fixture
def module_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [n for n in sys.modules if n.startswith("waited_for")]:
        del sys.modules[name]


def test_the_function_runs_right_after_the_first_import_and_once(module_dir: Path) -> None:
    (module_dir / "waited_for.py").write_text("LOADED = True\n")
    calls: list[str] = []

    def first() -> None:
        calls.append(f"first, loaded={sys.modules['waited_for'].LOADED}")

    after_import("waited_for", first)
    after_import("waited_for", first)  # the same function again: still once
    after_import("waited_for", lambda: calls.append("second"))
    assert calls == []  # nothing imported it yet, and waiting imported nothing
    assert "waited_for" not in sys.modules
    module = importlib.import_module("waited_for")
    assert calls == ["first, loaded=True", "second"]
    importlib.reload(module)
    assert calls == ["first, loaded=True", "second"]
    # the spec keeps its own loader: the module is what a plain import gives
    assert module.__spec__ is not None and module.__spec__.origin.endswith("waited_for.py")


def test_a_module_already_loaded_runs_the_function_at_once() -> None:
    calls: list[str] = []
    after_import("json", lambda: calls.append("now"))
    assert calls == ["now"]
