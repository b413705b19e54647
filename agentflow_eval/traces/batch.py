"""A batch's folder: what one run of ``traces score`` read, and how far it got, so that a
batch that stopped (a crash, a Prefect retry, Ctrl-C) goes on where it was.

===================  ==============================================================
``request.json``     the traces request the batch was started with
``claims.jsonl``     each object the batch set out to claim, before it claimed it
``checkpoint.json``  how far the reading got: claims read, counts, the recordings'
                     file sizes (replaced whole, every few objects and at the end)
``problems.jsonl``   every line, document or trace that could not be read, named
``altered.jsonl``    every trace with a value cut to the limits or a secret redacted
``versions/<v>/``    a recording per agent version (:mod:`.recording`)
``intake.json``      the intake's summary, once every object is read
``scored.json``      the run folder each version's traces were scored in
===================  ==============================================================

A batch resumes from its checkpoint: the recordings cut back to the sizes it logged, then
every object claimed after it — whose marker names this batch — read again.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field

from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.files.jsonl import iter_raw
from agentflow_eval.traces.summary import IntakeCounts, IntakeSummary

__all__ = ["BatchFolder", "Checkpoint", "new_batch_id"]


def new_batch_id(now: datetime | None = None) -> str:
    """A batch's id: when it started, and a random part."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(4)}"


class Checkpoint(BaseModel):
    """How far a batch's reading got."""

    model_config = ConfigDict(extra="forbid")

    claims_read: int = 0
    """Lines of ``claims.jsonl`` whose objects are read (or were not this batch's)."""
    counts: IntakeCounts = Field(default_factory=IntakeCounts)
    shares: list[tuple[list[str], int, int]] = Field(default_factory=list)
    """Each stratum's values, traces seen and scored."""
    versions: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Each version's recording: its folder's name, agent, window, files' sizes."""


@dataclass
class BatchFolder:
    """One batch's folder (see the module)."""

    root: Path

    @property
    def batch_id(self) -> str:
        return self.root.name

    @property
    def versions(self) -> Path:
        return self.root / "versions"

    @property
    def intake_path(self) -> Path:
        return self.root / "intake.json"

    @property
    def scored_path(self) -> Path:
        return self.root / "scored.json"

    @property
    def request_path(self) -> Path:
        return self.root / "request.json"

    def create(self, request: dict[str, Any]) -> None:
        """Make the folder and keep the request it was started with."""
        self.root.mkdir(parents=True, exist_ok=True)
        write_text_atomically(self.request_path, [json.dumps(request, indent=2) + "\n"])

    def request(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.request_path.read_text(encoding="utf-8"))
        return document

    def checkpoint(self) -> Checkpoint | None:
        path = self.root / "checkpoint.json"
        if not path.is_file():
            return None
        return Checkpoint.model_validate_json(path.read_text(encoding="utf-8"))

    def save(self, checkpoint: Checkpoint) -> None:
        write_text_atomically(self.root / "checkpoint.json", [checkpoint.model_dump_json()])

    def claims_after(self, read: int) -> Iterator[tuple[str, int]]:
        """The keys claimed after the first ``read`` claims, with when each object was
        written (nanoseconds)."""
        for number, raw in enumerate(iter_raw(self.root / "claims.jsonl")):
            if number >= read:
                yield str(raw["key"]), int(raw.get("modified_ns") or 0)

    def claims(self) -> IO[str]:
        """``claims.jsonl``, to append to."""
        return (self.root / "claims.jsonl").open("a", encoding="utf-8")

    def problems(self) -> IO[str]:
        """``problems.jsonl``, to append to."""
        return (self.root / "problems.jsonl").open("a", encoding="utf-8")

    def altered(self) -> IO[str]:
        """``altered.jsonl``, to append to."""
        return (self.root / "altered.jsonl").open("a", encoding="utf-8")

    def intake(self) -> IntakeSummary | None:
        if not self.intake_path.is_file():
            return None
        return IntakeSummary.model_validate_json(self.intake_path.read_text(encoding="utf-8"))

    def finish_intake(self, summary: IntakeSummary) -> None:
        write_text_atomically(self.intake_path, [summary.model_dump_json(indent=2) + "\n"])

    def scored(self) -> dict[str, str]:
        """Each version scored so far: the run folder it was scored in."""
        if not self.scored_path.is_file():
            return {}
        found: dict[str, str] = json.loads(self.scored_path.read_text(encoding="utf-8"))
        return found

    def mark_scored(self, version: str, run_dir: Path) -> None:
        scored = {**self.scored(), version: str(run_dir)}
        write_text_atomically(self.scored_path, [json.dumps(scored, indent=2) + "\n"])
