"""Three nights of one eval set for the run explorer's tests: a case that breaks, one
that gets fixed, one steady, one added; each night with its own agent version, and
models and labels shared by some of them."""

from __future__ import annotations

from agentflow_eval.models.results import RunResult
from support.run_counts import Counts, run_with_counts

__all__ = ["three_nights"]

NIGHTS = [
    [Counts("steady", 10, 10), Counts("broken", 10, 10), Counts("fixed", 0, 10)],
    [Counts("steady", 10, 10), Counts("broken", 0, 10), Counts("fixed", 10, 10)],
    [Counts("steady", 9, 10), Counts("broken", 1, 10), Counts("new", 5, 10)],
]


def three_nights() -> list[RunResult]:
    """The runs, oldest first: ``night0`` (v0), ``night1`` (v1, label branch=feature),
    ``night2`` (v2, another model)."""
    runs = []
    for day, counts in enumerate(NIGHTS):
        run = run_with_counts(counts, run_id=f"night{day}", day=day)
        run.agent_version = f"v{day}"
        run.agent_model = "gpt-demo" if day < 2 else "other-model"
        run.labels = {"branch": "main" if day != 1 else "feature"}
        runs.append(run)
    return runs
