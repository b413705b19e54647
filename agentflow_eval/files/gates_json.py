"""``gates.json``: a run folder's verdict on the gates its run was given.

Written once the run is reported, before it is published, so that whoever publishes the
folder — the run itself, or ``agentflow-eval publish DIR`` later — knows whether the run
may become its eval set's ``latest``: a run that failed a gate (a pass rate below
``min_pass_rate`` or ``min_case_pass_rate``, a regression under ``fail_on_regression``)
is published into the history but never becomes the baseline of the next run.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.files.limits import read_file_bytes, validate_json

__all__ = ["GATES_FILE", "GateRecord", "read_gates_json", "write_gates_json"]

GATES_FILE = "gates.json"


class GateRecord(BaseModel):
    """How the run fared against its gates: whether one failed, and each failure in a
    line naming its setting."""

    failed: bool = False
    reasons: list[str] = []


def write_gates_json(run_dir: Path, record: GateRecord) -> Path:
    """Write ``record`` as the run folder's gates.json (atomically)."""
    return write_text_atomically(run_dir / GATES_FILE, [record.model_dump_json(indent=2)])


def read_gates_json(run_dir: Path) -> GateRecord | None:
    """The run folder's gates.json, or ``None`` for a folder without one (written before
    runs recorded their gates). Raises :class:`~agentflow_eval.files.limits.UnreadableFile`
    for one that cannot be read."""
    path = run_dir / GATES_FILE
    if not path.is_file():
        return None
    return validate_json(GateRecord, read_file_bytes(path, what="a gates.json"), path)
