"""The two sides of a comparison: where a run's results are, read without their trials.

A side is written as:

- a run folder (``runs/20261120T023000Z-3f9a2c1e``) or its ``results.json``;
- ``s3://bucket/prefix/<eval_set_id>/<run folder>`` (a published run) or that folder's
  ``results.json``, and the same in the scheme of a store a package registered
  (:mod:`agentflow_eval.storage.stores`);
- ``<publish target>/<eval_set_id>/latest`` (S3 or a folder): the newest published run
  of the eval set, as its ``latest.json`` names it;
- ``latest`` with a publish target (``publish_to``) and the eval set's id (taken from the
  other side): the same thing, spelled shorter.

``latest.json`` only ever points at a completed run (every planned trial, not failed by
its regression gate; see :mod:`agentflow_eval.storage.history`). When it is the very run
being compared (the candidate was published already), the newest other completed run in
the eval set's ``runs.json`` is taken instead.

Given the agent the other side evaluated, ``latest`` is the newest completed run of that
same agent (and model, where it has one) in ``runs.json``: two agents published under one
prefix are never compared with each other. When only other agents' runs are there, the
lookup fails with :class:`OtherAgent`, naming them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentflow_eval.compare.reading import run_summary_from_stream
from agentflow_eval.errors import InputError
from agentflow_eval.files.limits import UnreadableFile, validate_json
from agentflow_eval.files.results_json import ResultsFileError
from agentflow_eval.models.request import S3Options
from agentflow_eval.models.results import RunResult
from agentflow_eval.storage.history import AgentIdentity, LatestPointer, RunsManifest
from agentflow_eval.storage.keys import key_part
from agentflow_eval.storage.locations import Location, locate
from agentflow_eval.storage.stores import store_form
from agentflow_eval.storage.targets import S3Credentials

__all__ = ["LATEST", "NoEarlierRun", "OtherAgent", "Side", "SideError", "is_latest", "load_side"]

LATEST = "latest"
RESULTS = "results.json"


class SideError(InputError):
    """A side that cannot be found or read; the message is one line naming it."""


class NoEarlierRun(SideError):
    """``latest`` found no published run of the eval set other than the one compared:
    the first run of a schedule has nothing to compare with yet."""


class OtherAgent(SideError):
    """``latest`` found completed runs of the eval set, none of them of the agent being
    compared: runs of different agents are not compared."""


@dataclass(frozen=True)
class Side:
    """A run to compare: what the user wrote, where its results were read, and the run
    (summaries only: ``trials`` and ``notes`` empty)."""

    spec: str
    source: str
    run: RunResult


def is_latest(spec: str | Path) -> bool:
    """Whether ``spec`` means the newest published run (bare ``latest`` or ``.../latest``)."""
    text = str(spec).rstrip("/")
    return text == LATEST or text.endswith("/" + LATEST)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _location(spec: str, s3: S3Options, credentials: S3Credentials | None) -> Location:
    scheme, separator, _ = spec.partition("://")
    if separator and store_form(scheme) is None:
        raise SideError(
            f"{spec}: not a run folder, a results.json, an s3:// location (or one in a "
            "registered store's scheme) or 'latest'"
        )
    if spec.startswith("s3://") and ("?" in spec or "#" in spec):
        raise SideError(f"{spec}: an s3:// location must not have a query or fragment")
    try:
        return locate(spec, s3, credentials)
    except ValueError as exc:
        raise SideError(f"{spec}: {_first_line(exc)}") from None


def _read_run(location: Location, hint: str = "") -> RunResult:
    stream = location.open()
    if stream is None:
        raise SideError(f"{location.where}: no such file{hint}")
    try:
        return run_summary_from_stream(stream, location.where)
    except ResultsFileError as exc:
        raise SideError(str(exc)) from None
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


def _model(location: Location, model: type[Any]) -> Any | None:
    raw = location.get()
    if raw is None:
        return None
    try:
        return validate_json(model, raw, location.where)
    except UnreadableFile as exc:
        raise SideError(str(exc)) from None


def _latest_results(
    eval_set: Location, exclude_run_id: str | None, agent: AgentIdentity | None
) -> Location:
    """Where the newest published run of the eval set (other than ``exclude_run_id``,
    of ``agent`` when given) keeps its results.json."""
    if agent is not None:
        return _latest_of_agent(eval_set, exclude_run_id, agent)
    pointer: LatestPointer | None = _model(eval_set.child("latest.json"), LatestPointer)
    if pointer is None:
        raise NoEarlierRun(
            f"{eval_set.where}: no latest.json, so no run of this eval set was published "
            "there (check the publish target and the eval set id)"
        )
    if exclude_run_id is None or pointer.run_id != exclude_run_id:
        return _child_path(eval_set, pointer.results)
    manifest: RunsManifest | None = _model(eval_set.child("runs.json"), RunsManifest)
    others = [
        entry
        for entry in (manifest.runs if manifest else [])
        if entry.run_id != exclude_run_id and entry.completed
    ]
    if not others:
        raise NoEarlierRun(
            f"{eval_set.where}: the only published run is {exclude_run_id}, the run being "
            "compared; there is no earlier run to compare it with"
        )
    return _child_path(eval_set, others[0].path(RESULTS))


def _latest_of_agent(
    eval_set: Location, exclude_run_id: str | None, agent: AgentIdentity
) -> Location:
    manifest: RunsManifest | None = _model(eval_set.child("runs.json"), RunsManifest)
    if manifest is None:
        raise NoEarlierRun(
            f"{eval_set.where}: no runs.json, so no run of this eval set was published "
            "there (check the publish target and the eval set id)"
        )
    others = [run for run in manifest.runs if run.run_id != exclude_run_id and run.completed]
    if not others:
        raise NoEarlierRun(
            f"{eval_set.where}: no completed run of this eval set was published there other "
            "than the one compared; there is no earlier run to compare it with"
        )
    same = [run for run in others if run.evaluated(agent)]
    if not same:
        seen = list(dict.fromkeys(AgentIdentity.of_entry(run).describe() for run in others))
        more = f" and {len(seen) - 3} more" if len(seen) > 3 else ""
        raise OtherAgent(
            f"{eval_set.where}: no completed run of {agent.describe()} was published there, "
            f"only of {', '.join(seen[:3])}{more}; runs of different agents are not compared"
        )
    return _child_path(eval_set, same[0].path(RESULTS))


def _child_path(location: Location, relative: str) -> Location:
    for part in relative.split("/"):
        if part in ("", ".", ".."):
            raise SideError(f"{location.where}: latest points outside its folder: {relative!r}")
        location = location.child(part)
    return location


def load_side(
    spec: str | Path,
    *,
    publish_to: str | Path | None = None,
    eval_set_id: str | None = None,
    exclude_run_id: str | None = None,
    s3: S3Options | None = None,
    credentials: S3Credentials | None = None,
    agent: AgentIdentity | None = None,
) -> Side:
    """Read one side of a comparison (see the module for how ``spec`` is written).

    ``latest`` needs ``publish_to`` (``s3://bucket/prefix`` or a folder) and
    ``eval_set_id``; ``exclude_run_id`` is the other side's run, never chosen as the
    latest, and ``agent`` the agent it evaluated: ``latest`` is then that agent's newest
    completed run. ``s3`` and ``credentials`` reach S3-compatible stores (credentials otherwise
    come from the standard AWS chain). Raises :class:`SideError` for a side that is
    missing or unreadable, and :class:`~agentflow_eval.errors.StoreError` when
    the store fails.
    """
    text = str(spec).strip()
    if not text:
        raise SideError("a side is empty: expected a run folder, results.json, s3:// or latest")
    options = s3 or S3Options()
    hint = ""
    if text.rstrip("/") == LATEST:
        if publish_to is None:
            raise SideError(
                "'latest' needs the publish target to look in: pass --publish-to "
                "s3://bucket/prefix (or a folder), or write s3://bucket/prefix/<eval_set_id>/latest"
            )
        if eval_set_id is None:
            raise SideError("'latest' needs the eval set's id: give the other side as a run")
        root = _location(str(publish_to).rstrip("/"), options, credentials)
        eval_set = root.child(key_part(eval_set_id))
        location = _latest_results(eval_set, exclude_run_id, agent)
    elif is_latest(text):
        eval_set = _location(text.rstrip("/").removesuffix("/" + LATEST), options, credentials)
        location = _latest_results(eval_set, exclude_run_id, agent)
    else:
        location = _location(text, options, credentials)
        if location.is_folder():
            location = location.child(RESULTS)
            hint = (
                " (a run folder holds results.json; for the newest published run of an eval "
                "set, end the location with /latest)"
            )
    return Side(spec=text, source=location.where, run=_read_run(location, hint))
