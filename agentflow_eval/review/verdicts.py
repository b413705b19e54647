"""The judged verdicts of a run in the little that agreement needs (criterion, trial,
verdict, content key, whether the samples disagreed, threshold), collected from the
run's results or one trial at a time while its judged trials are folded."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from agentflow_eval.models.results import RunResult, TrialResult
from agentflow_eval.review.items import content_key_of, samples_disagreed

__all__ = ["VerdictLedger", "VerdictRecord"]


@dataclass(frozen=True)
class VerdictRecord:
    """One criterion's pass or fail on one trial."""

    criterion: str
    label: str
    case_id: str
    trial: int
    passed: bool
    content_key: str | None
    samples_disagreed: bool
    threshold: float | None

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.case_id, self.trial, self.criterion)


@dataclass
class VerdictLedger:
    """The verdicts of a run, added trial by trial (``add`` fits ``aggregate_judged``'s
    ``on_trial``)."""

    records: list[VerdictRecord] = field(default_factory=list)

    def add(self, result: TrialResult) -> None:
        trial = result.trial
        for verdict in result.criteria:
            if verdict.status not in ("passed", "failed"):
                continue
            self.records.append(
                VerdictRecord(
                    criterion=verdict.criterion,
                    label=verdict.label or verdict.criterion,
                    case_id=trial.case_id,
                    trial=trial.trial_index,
                    passed=verdict.status == "passed",
                    content_key=content_key_of(verdict),
                    samples_disagreed=samples_disagreed(verdict),
                    threshold=verdict.threshold,
                )
            )

    @classmethod
    def of(cls, trials: Iterable[TrialResult]) -> VerdictLedger:
        ledger = cls()
        for result in trials:
            ledger.add(result)
        return ledger

    @classmethod
    def of_run(cls, run: RunResult) -> VerdictLedger:
        """The verdicts of a run read whole (its ``results.json``)."""
        return cls.of(run.trials)

    def content_keys(self) -> set[str]:
        return {record.content_key for record in self.records if record.content_key}

    def __iter__(self) -> Iterator[VerdictRecord]:
        return iter(self.records)
