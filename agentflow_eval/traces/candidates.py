"""Production failures as candidate cases: each trace whose trial failed (a criterion
failed, or the agent errored) becomes a case of an eval set the team reviews, made the
way ``eval-set add --from-session`` makes one from a conversation
(:func:`agentflow_eval.files.authoring.case_from_conversation`), so tomorrow's run of
that eval set covers today's failure.

A candidate keeps the trace's user turns and expects nothing of what the agent did (it
failed: its tool calls and answer are not references); its ``metadata`` keeps the trace
(id, start, object), the agent version and the criteria it failed, and the run that
scored it. Its id is ``trace-<trace id>``: adding a trace twice (a batch resumed, two
recordings of one trace) adds it once. The file is read, grown and replaced whole under
a lock, so runs adding at the same time lose no case.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agentflow_eval.files.authoring import (
    case_data,
    case_from_conversation,
    create_evalset,
    write_document,
)
from agentflow_eval.files.jsonl import iter_raw
from agentflow_eval.files.loading import load_evalset, read_document
from agentflow_eval.files.sessions import Conversation
from agentflow_eval.models.evalset import EvalCase
from agentflow_eval.models.results import TrialResult
from agentflow_eval.traces.recording import TRACES_FILE, TraceEntry

__all__ = ["Candidates", "add_candidates", "failed_traces"]

FAILING = ("failed", "errored")


@dataclass(frozen=True)
class Candidates:
    """What was added to the candidates file."""

    path: Path
    added: int
    already: int
    """Failing traces the file held as cases already."""


def failed_traces(
    judged: Path, recording: Path, *, source: str, agent_version: str, run_id: str
) -> Iterator[EvalCase]:
    """A candidate case for each failed or errored trial in ``judged`` (a run's
    ``judged.jsonl``) of the recording at ``recording``."""
    failures: dict[tuple[str, int], TrialResult] = {}
    for raw in iter_raw(judged):
        if raw.get("status") in FAILING:
            failed = TrialResult.model_validate(raw)
            failures.setdefault(failed.trial.key, failed)
    if not failures:
        return
    for raw in iter_raw(recording / TRACES_FILE):
        entry = TraceEntry.of(raw)
        result = failures.get((entry.case_id, entry.trial_index))
        if result is None:
            continue
        conversation = Conversation(
            turns=list(result.trial.turns), source=f"{source}#{entry.trace_id}"
        )
        case = case_from_conversation(conversation, f"trace-{entry.trace_id}", expect=())
        case.metadata.update(
            {
                "trace_id": entry.trace_id,
                "trace_time": entry.trace_time,
                "trace_object": entry.object,
                "agent_version": agent_version,
                "failed": [c.criterion for c in result.criteria if c.status == "failed"]
                + (["error: " + result.trial.error.message] if result.trial.error else []),
                "scored_in_run": run_id,
            }
        )
        yield case


def add_candidates(path: Path, cases: list[EvalCase], *, eval_set_id: str) -> Candidates:
    """Add ``cases`` to the eval set at ``path`` (made, with ``eval_set_id``, when
    missing), leaving out those whose id it has; under a lock beside the file."""
    with _locked(path):
        if not path.exists():
            create_evalset(path, eval_set_id=eval_set_id, name="production failures to review")
        known = {case.eval_id for case in load_evalset(path).eval_set.eval_cases}
        new = [case for case in cases if case.eval_id not in known]
        if new:
            document = read_document(path)
            key = "evalCases" if "evalCases" in document else "eval_cases"
            document.setdefault(key, []).extend(case_data(case) for case in new)
            write_document(path, document)
    return Candidates(path=path, added=len(new), already=len(cases) - len(new))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with (path.parent / f".{path.name}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
