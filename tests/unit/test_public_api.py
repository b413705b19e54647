"""The package's curated public API: every name it offers resolves, and importing the
package costs nothing heavy (no Prefect, no LiteLLM, none of the pipeline)."""

from __future__ import annotations

import json
import subprocess
import sys

import agentflow_eval


def test_every_public_name_resolves_to_the_object_it_names() -> None:
    assert set(agentflow_eval.__all__) == {"__version__", *agentflow_eval._EXPORTS}
    for name in agentflow_eval.__all__:
        assert getattr(agentflow_eval, name) is not None, name
    assert agentflow_eval.register_criterion.__module__ == "agentflow_eval.criteria.registry"
    assert agentflow_eval.AgentEvaluator.__name__ == "AgentEvaluator"
    assert agentflow_eval.evaluate.__module__ == "agentflow_eval.pipeline.evaluate"


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        agentflow_eval.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_the_package_imports_nothing_heavy() -> None:
    script = (
        "import json, sys, agentflow_eval; "
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('prefect', 'litellm', 'agentflow_eval'))))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["agentflow_eval", "agentflow_eval.version"]


def test_the_core_never_imports_prefect() -> None:
    """Prefect belongs to agentflow_eval.flows and agentflow_eval.tasks alone: running the
    whole pipeline from the core (AgentEvaluator's path) loads no Prefect module."""
    script = """
import asyncio, json, sys, tempfile
from agentflow_eval import AgentEvaluator
from agentflow_eval.cli import build_parser
build_parser()
run = asyncio.run(AgentEvaluator("examples.weather.agent:agent").evaluate(
    "examples/weather/weather.evalset.json", runs=1, output_dir=tempfile.mkdtemp()))
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "prefect")))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_no_core_module_imports_prefect() -> None:
    import ast
    from pathlib import Path

    core = Path(agentflow_eval.__file__).parent
    offenders = []
    for path in core.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(name.split(".")[0] == "prefect" for name in names):
                offenders.append(f"{path.relative_to(core)}:{node.lineno}")
    assert offenders == []
