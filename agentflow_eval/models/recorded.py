"""What a recording of production traces says about itself, in its folder's ``run.json``
under ``recorded``: the trials a run judges without running an agent came from traces an
agent left in production, not from a run (see :mod:`agentflow_eval.traces.recording`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RECORDED_KEY", "RecordedRun"]

RECORDED_KEY = "recorded"
"""The key of ``run.json`` that makes a folder a recording."""


class RecordedRun(BaseModel):
    """One agent version's traces read in one batch."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    """The recording's id (the batch's, and the version's)."""
    source: str
    """Where the traces were read (``s3://bucket/prefix`` or a folder)."""
    agent: str
    """The agent, as its traces name it (the resource's ``service.name``)."""
    agent_version: str
    """Its version, from the version attribute (``unknown`` when a trace has none)."""
    window_start: datetime
    """When the earliest of the version's traces the batch read began."""
    window_end: datetime
    """When the latest ended."""
    runs_per_case: int = Field(ge=1)
    """The most traces one case has."""
    traces_seen: int
    """The version's agent traces the batch read."""
    traces_scored: int
    """Those sampled to be scored (the recording's trials)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """What each result of it carries besides: the window, the source, the share scored."""

    @property
    def note(self) -> str:
        """What the reports of a run judging it say about its trials."""
        share = self.traces_scored / self.traces_seen if self.traces_seen else 0.0
        return (
            f"production traces of {self.agent} {self.agent_version} from {self.source}, "
            f"{self.window_start.isoformat()} to {self.window_end.isoformat()}: "
            f"{self.traces_scored:,} of {self.traces_seen:,} scored ({share:.1%}); "
            "each trace is a trial, judged as recorded (the agent was not run)"
        )

    def run_json(self) -> dict[str, Any]:
        """The recording's ``run.json``."""
        return {
            "run_id": self.run_id,
            "started_at": self.window_start.isoformat(),
            "runs_per_case": self.runs_per_case,
            "agent": self.agent,
            RECORDED_KEY: self.model_dump(mode="json"),
        }
