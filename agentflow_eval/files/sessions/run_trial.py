"""A trial of a run as a conversation: ``RUN_DIR#case_id/trial`` (the trial's number as
the run's reports show it, counted from 1)."""

from __future__ import annotations

import re
from pathlib import Path

from agentflow_eval.files.jsonl import iter_raw
from agentflow_eval.files.sessions import Conversation, SessionSourceError
from agentflow_eval.models.results import Trial

__all__ = ["names_a_trial", "read"]

_TRIAL = re.compile(r"^(?P<run_dir>.+)#(?P<case_id>.+)/(?P<number>\d+)$")


def names_a_trial(source: str) -> bool:
    return _TRIAL.match(source) is not None


def read(source: str) -> Conversation:
    match = _TRIAL.match(source)
    assert match is not None
    run_dir = Path(match["run_dir"])
    case_id, number = match["case_id"], int(match["number"])
    trials = run_dir / "trials.jsonl"
    if not trials.is_file():
        raise SessionSourceError(f"{source}: {run_dir} is not a run folder (no trials.jsonl)")
    if number < 1:
        raise SessionSourceError(f"{source}: trials are numbered from 1")
    seen = 0
    for raw in iter_raw(trials):
        if raw.get("case_id") != case_id:
            continue
        seen += 1
        if int(raw.get("trial_index", -1)) == number - 1:
            trial = Trial.model_validate(raw)
            return Conversation(
                turns=list(trial.turns),
                final_state=trial.final_session_state,
                source=source,
                notes=[f"trial {number} errored: {trial.error.message}"] if trial.error else [],
            )
    if not seen:
        raise SessionSourceError(f"{source}: the run has no case {case_id!r}")
    raise SessionSourceError(f"{source}: case {case_id!r} has no trial {number} in the run")
