"""What a finished run hands back to the front door that started it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.gates import GateVerdict

if TYPE_CHECKING:
    from agentflow_eval.compare.models import RunComparison
    from agentflow_eval.files.case_trials import CaseTrials
    from agentflow_eval.publish.publisher import PublishOutcome

__all__ = ["RunOutcome"]


class RunOutcome:
    """The results, where they are, where they went.

    A plain class on purpose, not a dataclass or a pydantic model: Prefect walks those in
    a flow's return value looking for futures, field by field, all the way down the run's
    cases; an object of its own type it returns untouched.
    """

    __slots__ = (
        "comparison",
        "gates",
        "notes",
        "publish",
        "published",
        "report_url",
        "run",
        "run_dir",
        "trials",
        "warnings",
    )

    def __init__(
        self,
        run: RunResult,
        run_dir: Path,
        report_url: str | None = None,
        published: list[str] | None = None,
        notes: list[str] | None = None,
        *,
        trials: CaseTrials | None = None,
        comparison: RunComparison | None = None,
        publish: PublishOutcome | None = None,
    ) -> None:
        self.run = run
        self.run_dir = run_dir
        self.report_url = report_url
        self.published: list[str] = list(published or [])
        self.notes: list[str] = list(notes or [])
        self.trials = trials
        """The run's judged trials by case, read from the run folder on demand."""
        self.comparison = comparison
        """With a baseline: the comparison."""
        self.publish = publish
        """With a publish target: what publishing did (``None``: not asked to)."""
        self.warnings: tuple[str, ...] = ()
        """What the run's inputs hold that is accepted but not used as written."""
        self.gates = GateVerdict()
        """How the run fared against its request's gates (decided by the one call that
        runs a request)."""

    @property
    def publish_problem(self) -> str | None:
        """Why the run was not published, when it was asked to be and was not."""
        if self.publish is None or self.publish.published:
            return None
        return self.publish.message

    def __repr__(self) -> str:
        return (
            f"RunOutcome(run_dir={str(self.run_dir)!r}, pass_rate={self.run.totals.pass_rate:.3f}"
            f", report_url={self.report_url!r})"
        )
