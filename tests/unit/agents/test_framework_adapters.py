"""Framework adapters: the built-in ones listed in one tuple, one per adapter module; a
package's own found through its ``agentflow_eval.adapters`` entry point or added with
``register_adapter``, asked before the built-ins."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest
from support.installed_package import installed_package

from agentflow_eval.agents import frameworks
from agentflow_eval.agents.frameworks import (
    ADAPTERS,
    BUILTIN_ADAPTERS,
    ENTRY_POINT_GROUP,
    FrameworkAdapter,
    adapter_for,
    adapters,
    register_adapter,
)
from agentflow_eval.agents.loader import load_agent

FRAMEWORKS = Path(frameworks.__file__).parent


def adapter_modules() -> set[str]:
    """The modules of the frameworks package that define ``wrap(obj, *, name)``, read
    from their source (importing them would import every framework)."""
    found: set[str] = set()
    for path in sorted(FRAMEWORKS.rglob("*.py")):
        if path == FRAMEWORKS / "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.FunctionDef) and node.name == "wrap" for node in tree.body):
            parts = path.relative_to(FRAMEWORKS.parent.parent.parent).with_suffix("").parts
            found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def test_every_adapter_module_is_listed_and_every_listed_one_exists():
    assert {adapter.module for adapter in BUILTIN_ADAPTERS} == adapter_modules()
    names = [adapter.name for adapter in BUILTIN_ADAPTERS]
    assert len(names) == len(set(names))
    assert set(names) <= {adapter.name for adapter in adapters()}


FRAMEWORK = """
class Agent:
    def __init__(self, label):
        self.label = label
"""
ADAPTER = """
from agentflow_eval.agents.frameworks import FrameworkAdapter

ADAPTER = FrameworkAdapter("tinyfw", ("tinyfw",), "tinyfw_wrap", "tinyfw")
"""
WRAP = """
from agentflow_eval.agents.python import PythonAgent

def wrap(obj, *, name):
    return PythonAgent(lambda message: obj.label, name=f"tinyfw:{name}:{obj.label}")
"""
USER_AGENT = """
from tinyfw import Agent

root_agent = Agent("hello")
"""


def test_an_installed_packages_adapter_evaluates_its_frameworks_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "tiny_agent.py").write_text(USER_AGENT)
    monkeypatch.chdir(tmp_path / "project")
    package = installed_package(
        tmp_path / "site",
        "tinyfw-eval",
        entry_points={ENTRY_POINT_GROUP: {"tinyfw": "tinyfw_adapter:ADAPTER"}},
        modules={"tinyfw.py": FRAMEWORK, "tinyfw_adapter.py": ADAPTER, "tinyfw_wrap.py": WRAP},
        reload=[ADAPTERS],
    )
    try:
        with package:
            agent = load_agent("tiny_agent.py")
            assert agent.name == "tinyfw:root_agent:hello"
            assert adapters()[0].name == "tinyfw"  # read after the built-ins: asked first
            framework_agent = importlib.import_module("tinyfw").Agent("again")
            assert adapter_for(framework_agent) is ADAPTERS.get("tinyfw")
        assert adapter_for(framework_agent) is None  # the adapter went with its package
        assert "tinyfw" not in {adapter.name for adapter in adapters()}
    finally:
        sys.modules.pop("tiny_agent", None)


class OwnAgent:
    label = "own"


def test_a_registered_adapter_is_asked_before_a_built_in_one():
    built_in = adapter_for(OwnAgent())
    assert built_in is None
    own = FrameworkAdapter("own", (__name__,), "own_wrap", "own")
    try:
        assert register_adapter(own) is own
        assert adapters()[0] is own
        assert adapter_for(OwnAgent()) is own
        # the same name again replaces it
        again = FrameworkAdapter("own", ("elsewhere",), "own_wrap", "own")
        register_adapter(again)
        assert adapter_for(OwnAgent()) is None
        assert [a for a in adapters() if a.name == "own"] == [again]
    finally:
        ADAPTERS.remove("own")
    assert "own" not in {adapter.name for adapter in adapters()}
