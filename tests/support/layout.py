"""The package as it installs, assembled from symbolic links: the repository keeps
``flows/`` and ``tasks/`` beside the package, and they install as ``agentflow_eval.flows``
and ``.tasks``. Tools that read the package from disk (import-linter, mypy) check it
there."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAPPED = {"flows": "flows", "tasks": "tasks"}

__all__ = ["ROOT", "installed_layout"]


def installed_layout(into: Path) -> Path:
    """Link ``agentflow_eval`` as it installs under ``into``; returns ``into``."""
    package = into / "agentflow_eval"
    package.mkdir()
    for entry in (ROOT / "agentflow_eval").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in MAPPED.items():
        (package / name).symlink_to(ROOT / folder)
    return into
