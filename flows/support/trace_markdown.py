"""A traces batch as the Markdown of its flow run's artifact."""

from __future__ import annotations

from agentflow_eval.pipeline.score_traces import TracesOutcome

__all__ = ["traces_markdown"]


def traces_markdown(outcome: TracesOutcome) -> str:
    """What the batch read and scored, a line an item."""
    lines = ["# Production traces scored", ""]
    lines += [f"- {line.strip()}" for line in outcome.lines()]
    return "\n".join(lines) + "\n"
