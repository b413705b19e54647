"""Where one run's files live, decided once when the run is planned."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agentflow_eval.files.naming import distinct_safe_id

__all__ = ["RunPaths", "eval_set_folder", "new_run_id"]


def eval_set_folder(output_root: Path, eval_set_id: str) -> Path:
    """The folder under ``output_root`` that holds the run folders of ``eval_set_id``."""
    return output_root / distinct_safe_id(eval_set_id)


@dataclass(frozen=True)
class RunPaths:
    """Where one run's files live."""

    run_dir: Path

    @property
    def trials(self) -> Path:
        return self.run_dir / "trials.jsonl"

    @property
    def judged(self) -> Path:
        return self.run_dir / "judged.jsonl"

    @property
    def results(self) -> Path:
        return self.run_dir / "results.json"

    @property
    def meta(self) -> Path:
        return self.run_dir / "run.json"

    @classmethod
    def new(cls, output_root: Path, eval_set_id: str, run_id: str, started: datetime) -> RunPaths:
        stamp = started.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        return cls(eval_set_folder(output_root, eval_set_id) / f"{stamp}-{run_id}")


def new_run_id() -> str:
    return secrets.token_hex(4)
