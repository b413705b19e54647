"""What a finished run hands back to the front door that started it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentflow_eval.models.results import RunResult

if TYPE_CHECKING:
    from agentflow_eval.compare.models import RunComparison

__all__ = ["RunOutcome"]


class RunOutcome:
    """The results, where they are, where they went.

    A plain class on purpose, not a dataclass or a pydantic model: Prefect walks those in
    a flow's return value looking for futures, field by field, all the way down the run's
    cases; an object of its own type it returns untouched.
    """

    __slots__ = ("comparison", "notes", "published", "report_url", "run", "run_dir")

    def __init__(
        self,
        run: RunResult,
        run_dir: Path,
        report_url: str | None = None,
        published: list[str] | None = None,
        notes: list[str] | None = None,
    ) -> None:
        self.run = run
        self.run_dir = run_dir
        self.report_url = report_url
        self.published: list[str] = list(published or [])
        self.notes: list[str] = list(notes or [])
        self.comparison: RunComparison | None = None  # with a baseline: the comparison

    def __repr__(self) -> str:
        return (
            f"RunOutcome(run_dir={str(self.run_dir)!r}, pass_rate={self.run.totals.pass_rate:.3f}"
            f", report_url={self.report_url!r})"
        )
