"""The installed distribution claims only the project's own top-level name: the
repository's flows/ and tasks/ folders install as ``agentflow_eval.flows`` and
``agentflow_eval.tasks``, never as top-level ``flows``/``tasks`` packages. (The wheel
pip builds and installs: tests/e2e/test_user_project.py.)"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _package_name(folder: Path) -> str:
    relative = folder.relative_to(ROOT).parts
    if relative[0] in ("flows", "tasks", "examples"):
        relative = ("agentflow_eval", *relative)
    return ".".join(relative)


def test_every_package_folder_is_listed_for_installation() -> None:
    listed = set(_setuptools()["packages"])
    folders = {
        _package_name(init.parent)
        for top in ("agentflow_eval", "flows", "tasks", "examples")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert folders == listed


def test_flows_and_tasks_map_under_the_project_namespace() -> None:
    assert _setuptools()["package-dir"] == {
        "agentflow_eval.flows": "flows",
        "agentflow_eval.tasks": "tasks",
        "agentflow_eval.examples": "examples",
    }
