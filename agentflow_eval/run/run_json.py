"""A run folder's ``run.json``: how the run was started, so the folder is its own resume
point. Read once per resume (:class:`RunRecord`), written when the run is planned."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.files.limits import UnreadableFile, read_json_file
from agentflow_eval.models.request import RunRequest
from agentflow_eval.run.meta import RunMeta
from agentflow_eval.run.paths import RunPaths

__all__ = [
    "DELIVERY_FIELDS",
    "RunRecord",
    "params_from_run_dir",
    "read_run_json",
    "record_elapsed",
    "resume_params",
    "write_run_json",
]


def read_run_json(run_dir: str | Path) -> dict[str, Any]:
    """A run folder's ``run.json``; a missing, unreadable or malformed one is an error
    naming the file."""
    path = Path(run_dir) / "run.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"{run_dir}: not a run folder to resume (no run.json); pass the folder an "
            "earlier run printed as 'results in ...'"
        )
    try:
        document = read_json_file(path, what="a run.json")
    except UnreadableFile as exc:
        raise EvalFileError(
            path, f"{exc.problem} (the run folder's run.json is damaged)", field=exc.field
        ) from None
    if not isinstance(document, dict):
        raise EvalFileError(path, "expected a JSON object (the run folder's run.json)")
    for key in ("run_id", "started_at"):
        if not isinstance(document.get(key), str):
            raise EvalFileError(path, f"has no {key!r} (the run folder's run.json)", field=key)
    try:
        datetime.fromisoformat(document["started_at"])
    except ValueError:
        raise EvalFileError(
            path, f"'started_at' is not a date: {document['started_at']!r}", field="started_at"
        ) from None
    return document


@dataclass(frozen=True)
class RunRecord:
    """A run folder and its ``run.json``, read once."""

    run_dir: Path
    document: Mapping[str, Any]

    @classmethod
    def read(cls, run_dir: str | Path) -> RunRecord:
        """The record of ``run_dir`` (see :func:`read_run_json` for what is refused)."""
        folder = Path(run_dir).resolve()
        return cls(folder, read_run_json(folder))

    @property
    def path(self) -> Path:
        return self.run_dir / "run.json"

    @property
    def fingerprint(self) -> Mapping[str, Any] | None:
        found = self.document.get("fingerprint")
        return found if isinstance(found, Mapping) else None

    def params(self) -> RunRequest:
        """The parameters the run was started with, set to resume it."""
        if "params" not in self.document:
            raise ValueError(
                f"{self.path}: this run was started from Python, not from parameters; resume "
                "it from Python with the same agent and eval set"
            )
        try:
            params = RunRequest.model_validate(self.document["params"])
        except ValueError as exc:
            first = str(exc).splitlines()
            raise EvalFileError(
                self.path, f"its 'params' are not valid: {first[1] if len(first) > 1 else exc}"
            ) from None
        return _from_started_dir(params, self.started_in).model_copy(
            update={"resume": str(self.run_dir)}
        )

    @property
    def started_in(self) -> Path | None:
        """The working directory the run was started in (``None`` in older folders)."""
        found = self.document.get("cwd")
        return Path(found) if isinstance(found, str) and found else None

    def runs_per_case(self, default: int) -> int:
        try:
            return int(self.document.get("runs_per_case", default))
        except (TypeError, ValueError):
            raise EvalFileError(
                self.path, "'runs_per_case' is not a number", field="runs_per_case"
            ) from None

    @property
    def elapsed_s(self) -> float:
        """Time the run's sessions so far spent (0 when not recorded, or not a time)."""
        found = self.document.get("elapsed_s")
        if isinstance(found, int | float) and math.isfinite(found) and found >= 0:
            return float(found)
        return 0.0

    @property
    def run_id(self) -> str:
        return str(self.document["run_id"])

    @property
    def started_at(self) -> datetime:
        return datetime.fromisoformat(self.document["started_at"])


def _from_started_dir(params: RunRequest, started_in: Path | None) -> RunRequest:
    """``params`` with each relative file path (eval set, config, an agent named by its
    file, the output folder, a re-judge's source run) that does not exist from here, but
    does from the directory the run was started in, made absolute there."""
    if started_in is None:
        return params

    def anchored(value: str | None, *, must_exist: bool = True) -> str | None:
        if not value or Path(value).is_absolute() or "://" in value:
            return value
        here, there = Path(value), started_in / value
        if here.exists() or (must_exist and not there.exists()):
            return value
        return str(there)

    update: dict[str, str | None] = {
        "evalset": anchored(params.evalset),
        "config": anchored(params.config),
        "output_dir": anchored(params.output_dir, must_exist=False),
        "rejudge_from": anchored(params.rejudge_from),
    }
    agent = params.agent or ""
    file_part, colon, attr = agent.rpartition(":") if ":" in agent else (agent, "", "")
    if file_part.endswith(".py") or "/" in file_part:
        update["agent"] = f"{anchored(file_part)}{colon}{attr}"
    return params.model_copy(update=update)


def params_from_run_dir(run_dir: str | Path) -> RunRequest:
    """The parameters a run was started with, read back from its ``run.json``."""
    return RunRecord.read(run_dir).params()


DELIVERY_FIELDS = (
    "publish_to",
    "s3",
    "baseline",
    "fail_on_regression",
    "min_pass_rate",
    "secrets",
    "shards",
    "shared_storage",
    "allowed_agents",
)
"""What a resume from a form or a deployment gives anew: where the results go, what they
are held to, and what the deployment allows. The rest (agent, eval set, runs, cases, ...)
is the run's, stored in its run.json."""


def resume_params(given: RunRequest) -> RunRequest:
    """The parameters that finish ``given.resume``: the settings the run was started with,
    and ``given``'s :data:`DELIVERY_FIELDS`. A form always submits every field (runs
    filled in with the default), so a resume takes the run's own rather than refusing
    values nobody meant to change."""
    if not given.resume:
        return given
    stored = RunRecord.read(given.resume).params()
    return stored.model_copy(update={name: getattr(given, name) for name in DELIVERY_FIELDS})


def write_run_json(
    paths: RunPaths,
    meta: RunMeta,
    *,
    fingerprint: Mapping[str, Any],
    params: RunRequest | None,
    earlier: RunRecord | None,
) -> None:
    """Write the run's ``run.json``: its id, start, runs per case, agent, the inputs'
    fingerprint (the first one, on a resume), the parameters it was started with and, for
    a re-judged run, its source run."""
    before: Mapping[str, Any] = earlier.document if earlier is not None else {}
    document: dict[str, object] = {
        "run_id": meta.run_id,
        "started_at": meta.started_at.isoformat(),
        "runs_per_case": meta.runs_per_case,
        "agent": meta.agent,
        "count_infrastructure_errors": meta.count_infrastructure_errors,
        "elapsed_s": meta.earlier_s,
        "fingerprint": before.get("fingerprint") or dict(fingerprint),
        # where relative paths in params are relative to: a resume from elsewhere finds
        # the files there
        "cwd": before.get("cwd") or str(Path.cwd()),
    }
    if meta.rejudged_from is not None:  # the run whose trials this one judges again
        document["rejudged_from"] = meta.rejudged_from.model_dump(mode="json")
    if params is not None:
        # the folder is its own resume point, so ``resume`` is left out: run.json says how
        # the run was started, whoever picked it up later
        document["params"] = params.model_dump(mode="json", exclude={"resume"})
    elif before.get("params") is not None:  # a resume from objects keeps the first ones
        document["params"] = before["params"]
    write_text_atomically(paths.meta, [json.dumps(document, indent=2)])


def record_elapsed(paths: RunPaths, meta: RunMeta) -> None:
    """Add this session's time to the folder's ``run.json`` (a later resume adds its own
    to it); nothing when the folder is gone (a new run that never started is removed)."""
    try:
        document = read_json_file(paths.meta, what="a run.json")
    except UnreadableFile:
        return
    if not isinstance(document, dict) or document.get("run_id") != meta.run_id:
        return
    document["elapsed_s"] = round(meta.elapsed_s(), 3)
    with contextlib.suppress(OSError):
        write_text_atomically(paths.meta, [json.dumps(document, indent=2)])
