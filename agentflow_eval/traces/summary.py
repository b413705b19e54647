"""What a batch read of a source, counted: the batch's ``intake.json``, the lines the CLI
and the flow's summary print, and the share scored every result of it carries."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["IntakeCounts", "IntakeSummary", "StratumShare", "VersionRecording"]

NAMED = 20
"""How many problems the summary names (all of them are in the batch's
``problems.jsonl``)."""


class IntakeCounts(BaseModel):
    """The counts a batch keeps as it reads (logged after every object, so a resumed
    batch goes on from them)."""

    model_config = ConfigDict(extra="forbid")

    objects_new: int = 0
    """Objects of the source no batch had read when this one listed them."""
    objects_read: int = 0
    """Those this batch claimed and read."""
    objects_claimed_elsewhere: int = 0
    """Those another batch claimed first (running at the same time)."""
    objects_left: int = 0
    """Those left for a later batch (``max_objects``)."""
    traces: int = 0
    """Agent traces read (the sampling's denominator)."""
    scored: int = 0
    """Those sampled to be scored."""
    not_agent: int = 0
    """Traces with no agent turn (other services' spans): not scored."""
    problems: int = 0
    """Lines, documents and traces that could not be read: counted, named, skipped."""
    cut_traces: int = 0
    """Traces with a text or a nesting cut to the limits."""
    redacted_traces: int = 0
    """Traces with an attribute redacted."""
    named: list[str] = Field(default_factory=list)
    """The first problems, named (``object:line trace id: reason``)."""


class StratumShare(BaseModel):
    """The share of one stratum scored."""

    stratum: dict[str, str]
    seen: int
    scored: int


class VersionRecording(BaseModel):
    """One agent version's traces of the batch: its recording and its window."""

    agent_version: str
    folder: str
    traces: int
    cases: int
    window_start: datetime
    window_end: datetime


class IntakeSummary(BaseModel):
    """A finished intake (``intake.json``)."""

    model_config = ConfigDict(extra="forbid")

    batch_id: str
    source: str
    started_at: datetime
    finished_at: datetime
    counts: IntakeCounts
    sample_rate: float
    shares: list[StratumShare]
    versions: list[VersionRecording]

    @property
    def share(self) -> float:
        return self.counts.scored / self.counts.traces if self.counts.traces else 0.0

    def lines(self) -> list[str]:
        """The intake in a few lines, for people."""
        c = self.counts
        if not c.objects_read:
            elsewhere = (
                f" ({c.objects_claimed_elsewhere:,} claimed by another run)"
                if c.objects_claimed_elsewhere
                else ""
            )
            return [f"{self.source}: no new trace objects{elsewhere}"]
        lines = [
            f"{self.source}: {c.objects_read:,} new object(s) read"
            + (
                f", {c.objects_claimed_elsewhere:,} read by another run"
                if c.objects_claimed_elsewhere
                else ""
            )
            + (f", {c.objects_left:,} left for the next run" if c.objects_left else ""),
            f"{c.traces:,} agent trace(s), {c.scored:,} scored ({self.share:.1%}, sample rate "
            f"{self.sample_rate:g})"
            + (f"; {c.not_agent:,} other trace(s) skipped" if c.not_agent else ""),
        ]
        if len(self.shares) > 1:
            for share in self.shares:
                named = ", ".join(f"{k}={v}" for k, v in share.stratum.items())
                lines.append(f"  {named}: {share.scored:,} of {share.seen:,} scored")
        if c.cut_traces:
            lines.append(
                f"{c.cut_traces:,} trace(s) with a value cut to the limits (altered.jsonl)"
            )
        if c.redacted_traces:
            lines.append(f"{c.redacted_traces:,} trace(s) with secrets redacted (altered.jsonl)")
        if c.problems:
            lines.append(f"{c.problems:,} unreadable, not scored (problems.jsonl):")
            lines.extend(f"  {name}" for name in c.named)
            if c.problems > len(c.named):
                lines.append(f"  and {c.problems - len(c.named):,} more")
        return lines
