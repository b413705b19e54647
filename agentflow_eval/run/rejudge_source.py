"""The run a re-judged run judges again: a finished run folder, read and checked once.

``agentflow-eval rejudge RUN_DIR`` (the evaluate flow's ``rejudge_from``,
:func:`agentflow_eval.pipeline.evaluate.rejudge`) plans a new run whose trials are the
source's: the source is read here (:func:`read_rejudge_source`), the new run is planned
with it (``plan_run(..., rejudge=source)``), and its trial stage copies the source's
trials (:mod:`.source_trials`) instead of running an agent; judging and everything after
it are the stage list's own. The source folder is only ever read.

A recording of production traces (:mod:`agentflow_eval.traces.recording`: a folder whose
``run.json`` says ``recorded``) is read here too: its trials were never judged, and what
they say about the agent (its name, version, the traces' window) is in that ``run.json``,
not in results.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentflow_eval.errors import InputError
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.files.jsonl import check_records
from agentflow_eval.files.limits import MAX_RESULTS_BYTES, UnreadableFile, read_json_file
from agentflow_eval.models.recorded import RECORDED_KEY, RecordedRun
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.results import RejudgedFrom, Trial
from agentflow_eval.run.inputs import RunInputs
from agentflow_eval.run.paths import RunPaths
from agentflow_eval.run.run_json import RunRecord

__all__ = ["RejudgeSource", "read_rejudge_source"]


@dataclass(frozen=True)
class RejudgeSource:
    """A finished run whose stored trials are judged again: where it is, which cases it
    ran and how often, and what its results say about the agent that made the trials."""

    record: RunRecord
    case_ids: tuple[str, ...]
    """The cases the source has trials of, in the order its trials file holds them."""
    runs_per_case: int
    agent: str
    agent_model: str | None = None
    agent_version: str | None = None
    git_sha: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    recorded: RecordedRun | None = None
    """For a recording of production traces: what it says about them."""

    @property
    def run_dir(self) -> Path:
        return self.record.run_dir

    @property
    def output_root(self) -> Path:
        """The output folder the source's run folder is in (a re-judged run goes beside
        it unless told otherwise)."""
        return self.run_dir.parent.parent

    @property
    def started_from_params(self) -> bool:
        """Whether the source recorded its parameters (a run started from Python did not)."""
        return "params" in self.record.document

    def params(self) -> RunRequest:
        """The parameters the source was started with (its eval set and config are the
        re-judge's defaults); refused for a run started from Python."""
        if not self.started_from_params:
            raise InputError(
                f"{self.run_dir}: this run was started from Python, so its eval set is not "
                "recorded; name the eval set to re-judge it with"
            )
        return self.record.params()

    @property
    def trials(self) -> Path:
        return RunPaths(self.run_dir).trials

    @property
    def named(self) -> RejudgedFrom:
        """How the re-judged run names its source (run.json, results.json)."""
        return RejudgedFrom(run_id=self.record.run_id, run_dir=str(self.run_dir))

    @property
    def note(self) -> str:
        """What the re-judged run's reports say about where its trials come from."""
        if self.recorded is not None:
            return self.recorded.note
        return (
            f"re-judged from run {self.run_dir.name}: its trials, judged again (the agent "
            "was not run)"
        )

    def inputs_for(self, inputs: RunInputs) -> RunInputs:
        """``inputs`` with only the source's cases; refused (one line) when the eval set
        lacks any of them: their trials would have nothing to be judged against."""
        by_id = {case.eval_id: case for case in inputs.eval_set.eval_cases}
        missing = [case_id for case_id in self.case_ids if case_id not in by_id]
        if missing:
            shown = ", ".join(repr(case_id) for case_id in missing[:3])
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            raise InputError(
                f"cannot re-judge {self.run_dir} with eval set "
                f"{inputs.eval_set.eval_set_id!r}: {len(missing)} of the run's cases are not "
                f"in it ({shown}{more}); re-judge with the eval set the run used, or one "
                "that holds its cases"
            )
        ran = set(self.case_ids)
        chosen = [case for case in inputs.eval_set.eval_cases if case.eval_id in ran]
        return replace(inputs, eval_set=inputs.eval_set.model_copy(update={"eval_cases": chosen}))


def read_rejudge_source(run_dir: str | Path) -> RejudgeSource:
    """The finished run at ``run_dir``. Refused with :class:`InputError` (one line that
    says what to do): a folder that is not a run folder, one without trials, a run that
    did not finish."""
    folder = Path(run_dir).resolve()
    paths = RunPaths(folder)
    if not paths.meta.is_file():
        raise InputError(
            f"{run_dir}: not a run folder (no run.json); pass a folder a run printed as "
            "'results in ...'"
        )
    record = RunRecord.read(folder)
    case_ids: dict[str, None] = {}
    for raw in check_records(paths.trials, Trial):  # read back whole before a stage does
        case_ids.setdefault(str(raw["case_id"]), None)
    if not case_ids:
        raise InputError(f"{run_dir}: the run has no trials (trials.jsonl) to judge again")
    if RECORDED_KEY in record.document:
        return _recording(record, tuple(case_ids))
    if not paths.results.is_file():
        raise InputError(
            f"{run_dir}: the run did not finish (no results.json); finish it with "
            f"`agentflow-eval run --resume {run_dir}`, then re-judge it"
        )
    results = _results_head(paths.results)
    labels = results.get("labels")
    return RejudgeSource(
        record=record,
        case_ids=tuple(case_ids),
        runs_per_case=record.runs_per_case(int(results.get("runs_per_case") or 1)),
        agent=str(record.document.get("agent") or results.get("agent") or ""),
        agent_model=_text(results.get("agent_model")),
        agent_version=_text(results.get("agent_version")),
        git_sha=_text(results.get("git_sha")),
        labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {},
    )


def _recording(record: RunRecord, case_ids: tuple[str, ...]) -> RejudgeSource:
    """A recording of production traces as the source of a run's trials."""
    try:
        recorded = RecordedRun.model_validate(record.document[RECORDED_KEY])
    except ValueError as exc:
        raise EvalFileError(
            record.path, f"its {RECORDED_KEY!r} is not a recording of traces ({exc})"
        ) from None
    return RejudgeSource(
        record=record,
        case_ids=case_ids,
        runs_per_case=recorded.runs_per_case,
        agent=recorded.agent,
        agent_version=recorded.agent_version,
        labels=dict(recorded.labels),
        recorded=recorded,
    )


def _results_head(path: Path) -> dict[str, Any]:
    """The source's results.json (what it says about the agent is read from it)."""
    try:
        document = read_json_file(path, max_bytes=MAX_RESULTS_BYTES, what="a results.json")
    except UnreadableFile as exc:
        raise InputError(f"{exc} (the run's results)") from None
    if not isinstance(document, dict):
        raise InputError(f"{path}: expected a JSON object (the run's results)")
    return document


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
