"""Steps ``prefect deploy`` runs from prefect.yaml (``build:``), checking a deployment
before it is stored rather than when its first run crashes on a worker."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["PROJECT_DIR_VARIABLE", "project_directory"]

PROJECT_DIR_VARIABLE = "AGENTFLOW_EVAL_PROJECT_DIR"


def project_directory(
    variable: str = PROJECT_DIR_VARIABLE, entrypoint: str = "flows/evaluate.py"
) -> dict[str, str]:
    """The folder runs execute in: ``$AGENTFLOW_EVAL_PROJECT_DIR``, else the folder
    ``prefect deploy`` runs in. Refuses, naming the folder, one that does not exist or
    does not hold ``entrypoint``. Returns ``{"directory": <absolute path>}`` for the pull
    step (``{{ <step id>.directory }}``)."""
    given = os.environ.get(variable, "").strip()
    folder = Path(given).expanduser() if given else Path.cwd()
    where = f"{variable}={given}" if given else f"the current folder ({variable} is not set)"
    if not folder.is_dir():
        raise ValueError(
            f"project folder {folder} does not exist ({where}); set {variable} to the "
            "folder holding this project and your agents, as the worker sees it"
        )
    if entrypoint and not (folder / entrypoint).is_file():
        raise ValueError(
            f"project folder {folder.resolve()} has no {entrypoint} ({where}); set "
            f"{variable} to the folder holding this project and your agents"
        )
    return {"directory": str(folder.resolve())}
