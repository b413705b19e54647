"""One agent version's scored traces of a batch, written as a folder a run judges without
running an agent (the re-judge path: ``rejudge_from`` names it,
:func:`agentflow_eval.run.rejudge_source.read_rejudge_source` reads it):

===========================  ===========================================================
``trials.jsonl``             a :class:`~agentflow_eval.models.results.Trial` per trace
``cases.jsonl``              the implicit cases, one a line, as the traces come
``traces.jsonl``             which trace each trial is: its id, start, object and line
``cases.evalset.json``       the implicit cases as an eval set (when the intake ends)
``cases.sqlite``             each case's trials so far (rebuilt from ``traces.jsonl``)
``run.json``                 what the recording is (``recorded``): source, agent version,
                             window, traces seen and scored
===========================  ===========================================================

The three ``.jsonl`` files are appended to a trace at a time and only grow; their sizes
after each object read are the batch's log (:mod:`.batch`), to which a resumed batch cuts
them back before it goes on.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.files.authoring import case_data
from agentflow_eval.files.jsonl import iter_raw
from agentflow_eval.models.evalset import EvalCase
from agentflow_eval.models.recorded import RecordedRun
from agentflow_eval.models.results import Trial
from agentflow_eval.traces.case_index import CaseIndex

__all__ = ["CASES_FILE", "EVALSET_FILE", "TRACES_FILE", "Recording", "TraceEntry"]

TRIALS_FILE = "trials.jsonl"
CASES_FILE = "cases.jsonl"
TRACES_FILE = "traces.jsonl"
EVALSET_FILE = "cases.evalset.json"
_APPENDED = (TRIALS_FILE, CASES_FILE, TRACES_FILE)


@dataclass(frozen=True)
class TraceEntry:
    """Which trace a trial is (a line of ``traces.jsonl``)."""

    case_id: str
    trial_index: int
    trace_id: str
    trace_time: str
    object: str
    line: int
    start_ns: int
    end_ns: int
    cut: int = 0
    redacted: int = 0
    stratum: dict[str, str] = field(default_factory=dict)
    """The values of the strata it was sampled in (the agent's version aside)."""

    def data(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> TraceEntry:
        return cls(**{name: raw[name] for name in cls.__dataclass_fields__ if name in raw})


@dataclass
class Recording:
    """The folder of one version's traces (see the module), open for appending."""

    folder: Path
    version: str
    index: CaseIndex
    """Each case's trials so far."""
    traces: int = 0
    """The trials recorded."""
    _handles: dict[str, IO[bytes]] = field(default_factory=dict, repr=False)

    @classmethod
    def open(cls, folder: Path, version: str, sizes: Mapping[str, int] | None) -> Recording:
        """The recording at ``folder``, its files cut back to ``sizes`` (a resumed batch's
        last checkpoint; ``None``: a recording the checkpoint does not know, made afresh)
        and its case index rebuilt from what they hold."""
        folder.mkdir(parents=True, exist_ok=True)
        for name in _APPENDED:
            path = folder / name
            path.touch()
            kept = int(sizes.get(name, 0)) if sizes is not None else 0
            os.truncate(path, min(kept, path.stat().st_size))
        recording = cls(folder, version, CaseIndex(folder / "cases.sqlite"))
        for raw in iter_raw(folder / TRACES_FILE):
            entry = TraceEntry.of(raw)
            recording.index.seen(entry.case_id, entry.trial_index)
            recording.traces += 1
        return recording

    def _handle(self, name: str) -> IO[bytes]:
        handle = self._handles.get(name)
        if handle is None:
            handle = self._handles[name] = (self.folder / name).open("ab")
        return handle

    def take_index(self, case_id: str) -> int:
        """The index of the case's next trial (0: the case is new), counted as taken."""
        return self.index.take(case_id)

    def add(self, trial: Trial, case: EvalCase | None, entry: TraceEntry) -> None:
        """Append a trial, its trace and (for a case not seen before) its case."""
        if case is not None:
            self._write(CASES_FILE, case_data(case))
        self._handle(TRIALS_FILE).write(trial.model_dump_json().encode() + b"\n")
        self._write(TRACES_FILE, entry.data())
        self.traces += 1

    def _write(self, name: str, data: Mapping[str, Any]) -> None:
        self._handle(name).write(json.dumps(data, ensure_ascii=False).encode() + b"\n")

    def flush(self) -> dict[str, int]:
        """Everything appended on disk; the files' sizes (the batch logs them)."""
        for handle in self._handles.values():
            handle.flush()
            os.fsync(handle.fileno())
        return {name: (self.folder / name).stat().st_size for name in _APPENDED}

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()

    def _evalset(self, eval_set_id: str, name: str) -> Iterator[str]:
        """The eval set file, a case at a time (a recording may hold many)."""
        header = json.dumps({"eval_set_id": eval_set_id, "name": name}, ensure_ascii=False)
        yield header[:-1] + ', "eval_cases": [\n'
        for number, raw in enumerate(iter_raw(self.folder / CASES_FILE)):
            yield ("" if number == 0 else ",\n") + json.dumps(raw, ensure_ascii=False)
        yield "\n]}\n"

    def finish(self, eval_set_id: str, name: str, record: RecordedRun) -> None:
        """Write the eval set of the implicit cases and ``run.json`` (the recording is
        complete: a run may judge it)."""
        self.close()
        self.index.close()
        write_text_atomically(self.folder / EVALSET_FILE, self._evalset(eval_set_id, name))
        write_text_atomically(
            self.folder / "run.json", [json.dumps(record.run_json(), indent=2) + "\n"]
        )
