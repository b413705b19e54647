"""Reading a source's new traces into recordings, one per agent version: the first half
of scoring production traces (the second is an ordinary run over each recording).

The source is listed a page at a time; each trace object not read before (the
:class:`~.cursor.Cursor`) and matching the patterns is claimed, then read
(:func:`~.reading.traces_in`); each of its agent traces is sampled (:class:`~.sampling.
Sampler`; the agent's version is always the first stratum) and, when picked, written to
its version's recording as a trial of its implicit case (:mod:`.trials`). Memory stays
flat however many objects the source holds: one object's traces at a time, eight bytes
per object read before, a count per stratum, and the case ids of the cases written.

What cannot be read is counted and named in ``problems.jsonl``, and the next trace is
read: nothing a trace holds stops the intake. Traces with a value cut to the limits or an
attribute redacted are counted and named in ``altered.jsonl``.
"""

from __future__ import annotations

import fnmatch
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agentflow_eval.errors import StoreError
from agentflow_eval.files.naming import safe_id
from agentflow_eval.models.recorded import RecordedRun
from agentflow_eval.models.results import Turn
from agentflow_eval.redaction import redact
from agentflow_eval.storage.base import ListingStore
from agentflow_eval.traces.batch import BatchFolder, Checkpoint
from agentflow_eval.traces.bounds import Limits
from agentflow_eval.traces.cursor import Cursor
from agentflow_eval.traces.problem import TraceProblem
from agentflow_eval.traces.reading import traces_in
from agentflow_eval.traces.recording import Recording, TraceEntry
from agentflow_eval.traces.sampling import Sampler, Share, Stratum
from agentflow_eval.traces.summary import (
    NAMED,
    IntakeSummary,
    StratumShare,
    VersionRecording,
)
from agentflow_eval.traces.trials import (
    NotAnAgentTrace,
    Recorded,
    implicit_case,
    recorded_trial,
    recorded_turns,
    trace_time,
)

__all__ = ["IntakeOptions", "read_new_traces"]

UNKNOWN_VERSION = "unknown"
_CHECKPOINT_EVERY_S = 5.0
_CHECKPOINT_EVERY_OBJECTS = 1000


@dataclass(frozen=True)
class IntakeOptions:
    """How a batch reads its source."""

    source: str
    """The source as the team wrote it (for messages and results)."""
    eval_set_id: str
    version_attribute: str
    case_attribute: str | None
    strata: tuple[str, ...]
    sample_rate: float
    include: tuple[str, ...]
    max_objects: int | None
    limits: Limits
    max_line_bytes: int

    @property
    def sampled_by(self) -> tuple[str, ...]:
        """The strata, the version first."""
        return (self.version_attribute, *(s for s in self.strata if s != self.version_attribute))

    def includes(self, key: str) -> bool:
        name = key.rsplit("/", 1)[-1]
        return any(
            fnmatch.fnmatchcase(key, pattern) or fnmatch.fnmatchcase(name, pattern)
            for pattern in self.include
        )


def read_new_traces(
    source: ListingStore, cursor: Cursor, batch: BatchFolder, options: IntakeOptions
) -> IntakeSummary:
    """Read the source's new traces into the batch's recordings (see the module); an
    intake already finished is returned as it was."""
    finished = batch.intake()
    if finished is not None:
        return finished
    return _Intake(source, cursor, batch, options).run()


class _Intake:
    def __init__(
        self, source: ListingStore, cursor: Cursor, batch: BatchFolder, options: IntakeOptions
    ) -> None:
        self.source = source
        self.cursor = cursor
        self.batch = batch
        self.options = options
        self.started = datetime.now(UTC)
        point = batch.checkpoint() or Checkpoint()
        self.claims_read = point.claims_read
        self.counts = point.counts
        self.sampler: Sampler[tuple[Recorded, Stratum]] = Sampler(
            options.sample_rate, options.sampled_by
        )
        self.sampler.restore(
            {tuple(values): Share(seen, scored) for values, seen, scored in point.shares}
        )
        self.versions: dict[str, dict[str, Any]] = {k: dict(v) for k, v in point.versions.items()}
        self.recordings: dict[str, Recording] = {
            version: Recording.open(batch.versions / about["folder"], version, about["sizes"])
            for version, about in self.versions.items()
        }
        self._since_checkpoint = 0
        self._checkpointed_at = time.monotonic()

    # -- the batch ------------------------------------------------------------------------

    def run(self) -> IntakeSummary:
        with (
            self.batch.claims() as claims,
            self.batch.problems() as problems,
            self.batch.altered() as altered,
        ):
            self.problems_file = problems
            self.altered_file = altered
            for key, modified_ns in list(self.batch.claims_after(self.claims_read)):
                if self.cursor.claimed_by(key) == self.batch.batch_id:  # a resumed batch's
                    self._read(key, modified_ns)
                self.claims_read += 1
            self._checkpoint()
            read_before = self.cursor.read_before()
            for stored in self.source.list_objects():
                if not self.options.includes(stored.key) or stored.key in read_before:
                    continue
                self.counts.objects_new += 1
                limit = self.options.max_objects
                if limit is not None and self.counts.objects_read >= limit:
                    self.counts.objects_left += 1
                    continue
                modified_ns = int(stored.modified.timestamp() * 1e9)
                claims.write(json.dumps({"key": stored.key, "modified_ns": modified_ns}) + "\n")
                claims.flush()
                if self.cursor.claim(stored.key, self.batch.batch_id):
                    self._read(stored.key, modified_ns)
                else:
                    self.counts.objects_claimed_elsewhere += 1
                self.claims_read += 1
                self._maybe_checkpoint()
            for trace, stratum in self.sampler.stand_ins():
                self._record(trace, stratum)
            self._checkpoint()
        return self._finish()

    def _maybe_checkpoint(self) -> None:
        self._since_checkpoint += 1
        if (
            self._since_checkpoint >= _CHECKPOINT_EVERY_OBJECTS
            or time.monotonic() - self._checkpointed_at >= _CHECKPOINT_EVERY_S
        ):
            self._checkpoint()

    def _checkpoint(self) -> None:
        for version, recording in self.recordings.items():
            self.versions[version]["sizes"] = recording.flush()
        self.problems_file.flush()
        self.altered_file.flush()
        self.batch.save(
            Checkpoint(
                claims_read=self.claims_read,
                counts=self.counts,
                shares=[
                    (list(stratum), share.seen, share.scored)
                    for stratum, share in self.sampler.shares().items()
                ],
                versions=self.versions,
            )
        )
        self._since_checkpoint = 0
        self._checkpointed_at = time.monotonic()

    # -- one object -----------------------------------------------------------------------

    def _read(self, key: str, modified_ns: int) -> None:
        self.counts.objects_read += 1
        try:
            stream = self.source.open_listed(key)
        except StoreError as exc:
            if exc.transient:
                raise  # the store, not the object: a retry of the batch reads it again
            self._problem(TraceProblem(key, 0, str(exc)))
            return
        if stream is None:
            self._problem(TraceProblem(key, 0, "gone before it was read"))
            return
        try:
            for item in traces_in(
                stream,
                key,
                limits=self.options.limits,
                max_bytes=self.options.max_line_bytes,
                modified_ns=modified_ns,
            ):
                if isinstance(item, TraceProblem):
                    self._problem(item)
                else:
                    self._trace(item)
        finally:
            stream.close()

    def _trace(self, trace: Recorded) -> None:
        incomplete = trace.incomplete()
        try:
            turns = recorded_turns(trace)
        except NotAnAgentTrace:
            self.counts.not_agent += 1
            return
        except (RecursionError, ValueError, TypeError, KeyError, AttributeError) as exc:
            self._problem(TraceProblem(trace.key, trace.line, _said(exc), trace.trace_id))
            return
        if incomplete is not None:
            self._problem(TraceProblem(trace.key, trace.line, incomplete, trace.trace_id))
            return
        version = trace.attribute(self.options.version_attribute) or UNKNOWN_VERSION
        stratum: Stratum = (
            version,
            *(trace.attribute(name) or "-" for name in self.options.sampled_by[1:]),
        )
        self.counts.traces += 1
        self._window(version, trace)
        if trace.cut or trace.redacted:
            self.counts.cut_traces += bool(trace.cut)
            self.counts.redacted_traces += bool(trace.redacted)
            self.altered_file.write(
                json.dumps(
                    {
                        "object": trace.key,
                        "line": trace.line,
                        "trace_id": trace.trace_id,
                        "cut": trace.cut,
                        "redacted": trace.redacted,
                    }
                )
                + "\n"
            )
        if self.sampler.consider(stratum, trace.trace_id, (trace, stratum)):
            self._record(trace, stratum, turns)

    def _window(self, version: str, trace: Recorded) -> None:
        about = self._version(version, trace)
        about["start_ns"] = min(about.get("start_ns") or trace.start_ns, trace.start_ns)
        about["end_ns"] = max(about.get("end_ns") or 0, trace.end_ns)

    def _version(self, version: str, trace: Recorded) -> dict[str, Any]:
        about = self.versions.get(version)
        if about is None:
            taken = {v["folder"] for v in self.versions.values()}
            folder = safe_id(version, max_length=60) or "version"
            while folder in taken:
                folder += "_"
            agent = trace.attribute("service.name") or trace.attribute("gen_ai.agent.name")
            about = self.versions[version] = {
                "folder": folder,
                "agent": agent or "production agent",
                "sizes": None,
            }
            self.recordings[version] = Recording.open(
                self.batch.versions / folder, version, sizes=None
            )
        return about

    def _record(self, trace: Recorded, stratum: Stratum, turns: list[Turn] | None = None) -> None:
        recording = self.recordings[stratum[0]]
        attribute = self.options.case_attribute
        case_id = (trace.attribute(attribute) if attribute else None) or trace.trace_id
        try:
            trial = recorded_trial(trace, case_id, 0, turns)
        except (RecursionError, ValueError, TypeError, KeyError, AttributeError) as exc:
            self.sampler.withdraw(stratum)
            self._problem(TraceProblem(trace.key, trace.line, _said(exc), trace.trace_id))
            return
        index = recording.take_index(case_id)
        trial = trial.model_copy(update={"trial_index": index})
        case = implicit_case(trace, case_id, trial.turns) if index == 0 else None
        entry = TraceEntry(
            case_id=case_id,
            trial_index=index,
            trace_id=trace.trace_id,
            trace_time=trace_time(trace).isoformat(),
            object=trace.key,
            line=trace.line,
            start_ns=trace.start_ns,
            end_ns=trace.end_ns,
            cut=trace.cut,
            redacted=trace.redacted,
            stratum=dict(zip(self.options.sampled_by[1:], stratum[1:], strict=True)),
        )
        recording.add(trial, case, entry)
        self.counts.scored += 1

    def _problem(self, problem: TraceProblem) -> None:
        self.counts.problems += 1
        self.problems_file.write(
            json.dumps(
                {
                    "object": problem.key,
                    "line": problem.line,
                    "trace_id": problem.trace_id,
                    "reason": problem.reason,
                }
            )
            + "\n"
        )
        self._name(f"{problem.named}: {problem.reason}")

    def _name(self, text: str) -> None:
        if len(self.counts.named) < NAMED:
            self.counts.named.append(text)

    # -- the end --------------------------------------------------------------------------

    def _finish(self) -> IntakeSummary:
        shares = self.sampler.shares()
        seen_of: dict[str, int] = {}
        for stratum, share in shares.items():
            seen_of[stratum[0]] = seen_of.get(stratum[0], 0) + share.seen
        versions = []
        for version, recording in self.recordings.items():
            about = self.versions[version]
            if not recording.traces:
                continue
            cases = recording.index.cases
            window_start = _time(about["start_ns"])
            window_end = _time(about["end_ns"])
            seen = seen_of.get(version, recording.traces)
            record = RecordedRun(
                run_id=f"{self.batch.batch_id}-{about['folder']}",
                source=self.options.source,
                agent=str(about["agent"]),
                agent_version=version,
                window_start=window_start,
                window_end=window_end,
                runs_per_case=recording.index.most_trials,
                traces_seen=seen,
                traces_scored=recording.traces,
                labels={
                    "traces_source": self.options.source,
                    "window_start": window_start.isoformat(),
                    "window_end": window_end.isoformat(),
                    "traces_seen": str(seen),
                    "traces_scored": str(recording.traces),
                    "share_scored": f"{recording.traces / seen:.4f}" if seen else "0",
                    "traces_batch": self.batch.batch_id,
                },
            )
            recording.finish(
                self.options.eval_set_id, f"production traces of {self.options.source}", record
            )
            versions.append(
                VersionRecording(
                    agent_version=version,
                    folder=str(recording.folder),
                    traces=recording.traces,
                    cases=cases,
                    window_start=window_start,
                    window_end=window_end,
                )
            )
        summary = IntakeSummary(
            batch_id=self.batch.batch_id,
            source=self.options.source,
            started_at=self.started,
            finished_at=datetime.now(UTC),
            counts=self.counts,
            sample_rate=self.options.sample_rate,
            shares=[
                StratumShare(
                    stratum=dict(zip(self.options.sampled_by, stratum, strict=True)),
                    seen=share.seen,
                    scored=share.scored,
                )
                for stratum, share in shares.items()
            ],
            versions=versions,
        )
        self.batch.finish_intake(summary)
        return summary


def _time(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, UTC)


def _said(exc: BaseException) -> str:
    """An exception in a line, redacted: its text may quote a value of the trace."""
    text = redact(str(exc).splitlines()[0]) if str(exc) else ""
    return f"not read ({type(exc).__name__}: {text})"[:240]
