"""The package's curated public API: every name it offers resolves, and no core module
imports Prefect. (What importing the package costs, in a fresh interpreter:
tests/e2e/test_fresh_interpreter.py.)"""

from __future__ import annotations

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
