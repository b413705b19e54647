"""Publishing a finished run directory to a target, so the team finds it where it looks.

Layout under the target (``s3://bucket/prefix`` or a directory)::

    <prefix>/<eval_set_id>/<UTC start>-<run_id>/report.html
                                               /results.json
                                               /junit.xml
                                               /comparison.json   (compared runs)
                                               /labels.jsonl      (labelled runs)
    <prefix>/label-bank/…                the labels of every published run, by the
                                         content key of what they judged
    <prefix>/<eval_set_id>/runs.json     every published run, newest first
    <prefix>/<eval_set_id>/index.html    those runs as a page, with pass rates and trends
    <prefix>/<eval_set_id>/explorer.html the runs filtered, any two side by side
    <prefix>/<eval_set_id>/trend.html    pass rate and efficiency by version and window
    <prefix>/<eval_set_id>/latest.json   the newest completed run (written last)

The order of writes is what keeps ``latest`` honest: a run's own files first, then the
history, and ``latest.json`` last, so a publish that fails part way never leaves
``latest`` pointing at a run whose files are not all there. ``latest`` moves only to a
completed run (every planned trial, and no gate failed: see
:mod:`~agentflow_eval.storage.history`): a run below its ``min_pass_rate`` or
``min_case_pass_rate``, or that regressed under ``fail_on_regression`` (its gates.json
says, or for a folder without one its comparison.json), is in the history but never
becomes the baseline it is compared with next time.

Every key segment comes from :func:`~agentflow_eval.storage.keys.key_part`; every object has
its Content-Type. Each upload is retried with exponential backoff and full jitter. If the
store stays down, nothing is lost: the run directory stays where it is, a
``publish-pending.json`` in it records the target and the error, the outcome says where
the run is, and :func:`publish_pending` uploads it later.

``runs.json`` is read, updated and written back; two runs of the same eval set published
at the same instant can race, and the loser's entry is re-added the next time that run is
published. Runs never overwrite each other's folders.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from agentflow_eval.compare.models import RunComparison
from agentflow_eval.errors import InputError, StoreError
from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.files.gates_json import GATES_FILE, GateRecord
from agentflow_eval.files.limits import UnreadableFile, read_file_bytes, validate_json
from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.models.results import RunResult
from agentflow_eval.publish.comparison_digest import comparison_digest
from agentflow_eval.publish.history_pages import HistoryPages, publish_history_pages
from agentflow_eval.review.bank import LabelBank
from agentflow_eval.review.labels import LABELS_FILE, LabelsFileError, labels_from_bytes
from agentflow_eval.run.efficiency import run_efficiency
from agentflow_eval.storage import open_store
from agentflow_eval.storage.base import ObjectStore
from agentflow_eval.storage.history import ComparisonDigest, LatestPointer, RunsManifest, run_entry
from agentflow_eval.storage.keys import join_key, key_part
from agentflow_eval.storage.targets import S3Credentials, S3Target, Target, parse_target

__all__ = [
    "CONTENT_TYPES",
    "OPTIONAL_RUN_FILES",
    "PENDING_MARKER",
    "PUBLISHED_MARKER",
    "RUN_FILES",
    "PublishOutcome",
    "Retrier",
    "RetryPolicy",
    "find_pending",
    "publish_pending",
    "publish_run",
    "run_folder",
]

RUN_FILES = ("report.html", "results.json", "junit.xml")
"""What a finished run directory holds and publishing uploads."""

OPTIONAL_RUN_FILES = ("comparison.json", GATES_FILE, LABELS_FILE)
"""Uploaded too when the run folder has them (a run compared with its baseline; the
verdict on its gates; a run whose verdicts people labelled)."""

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".jsonl": "application/x-ndjson",
    ".xml": "application/xml",
}

PENDING_MARKER = "publish-pending.json"
PUBLISHED_MARKER = "published.json"
NO_CACHE = "no-cache"  # index, manifest and pointer change with every run

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: before attempt ``n + 1`` wait a random time
    in ``[0, min(max_delay_s, base_delay_s * 2**n)]``."""

    attempts: int = 5
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {self.attempts}")
        if self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError("retry delays must not be negative")

    def delay(self, attempt: int, rng: random.Random) -> float:
        """The wait after failed attempt number ``attempt`` (0-based)."""
        return rng.uniform(0.0, min(self.max_delay_s, self.base_delay_s * 2**attempt))


@dataclass
class Retrier:
    """Runs store operations under a policy and counts the attempts made."""

    policy: RetryPolicy
    sleep: Callable[[float], None]
    rng: random.Random = field(default_factory=random.Random)
    attempts: int = 0

    def __call__(self, operation: Callable[[], T]) -> T:
        for attempt in range(self.policy.attempts):
            self.attempts += 1
            try:
                return operation()
            except StoreError as exc:
                if not exc.transient or attempt == self.policy.attempts - 1:
                    raise
                self.sleep(self.policy.delay(attempt, self.rng))
        raise AssertionError("unreachable: the last attempt returns or raises")


@dataclass(frozen=True)
class PublishOutcome:
    """What publishing did. ``published`` False means the store could not take the run:
    ``message`` says why and where the run is kept; ``local_dir`` still holds it."""

    published: bool
    target: str
    local_dir: Path
    message: str
    urls: dict[str, str] = field(default_factory=dict)
    attempts: int = 0

    @property
    def report_url(self) -> str | None:
        return self.urls.get("report")


class _PendingRecord(BaseModel):
    """``publish-pending.json``: where a run was going and why it did not get there.
    Credentials are never written; the standard chain (or the caller) supplies them."""

    target: Target = Field(discriminator="kind")
    error: str
    attempts: int
    failed_at: datetime


def run_folder(run: RunResult) -> str:
    """The run's folder name: ``<UTC start, 20261120T023000Z>-<run id>``."""
    started = run.started_at
    started = started.astimezone(UTC) if started.tzinfo else started.replace(tzinfo=UTC)
    return key_part(f"{started:%Y%m%dT%H%M%SZ}-{key_part(run.run_id, max_length=80)}")


def _content_type(name: str) -> str:
    suffix = Path(name).suffix.lower()
    try:
        return CONTENT_TYPES[suffix]
    except KeyError:
        raise ValueError(f"no content type known for {name!r}") from None


def _read_run_dir(local_dir: Path) -> tuple[RunResult, dict[str, bytes]]:
    """The run in ``local_dir`` and the files published with it. A folder without them
    all is refused (:class:`InputError`), saying how to write what is missing: a run is
    published whole, its report first of all, never in part."""
    if not local_dir.is_dir():
        raise InputError(f"run directory {local_dir} does not exist")
    missing = [name for name in RUN_FILES if not (local_dir / name).is_file()]
    if missing:
        fix = (
            f"; write the report from its results with `agentflow-eval report {local_dir}`"
            if "report.html" in missing and "results.json" not in missing
            else ""
        )
        raise InputError(
            f"run directory {local_dir} is not a finished run: missing {', '.join(missing)} "
            f"(expected {', '.join(RUN_FILES)}){fix}"
        )
    run = read_results_json(local_dir / "results.json")
    names = [*RUN_FILES, *(name for name in OPTIONAL_RUN_FILES if (local_dir / name).is_file())]
    return run, {name: (local_dir / name).read_bytes() for name in names}


def _comparison_of(
    files: dict[str, bytes], local_dir: Path
) -> tuple[ComparisonDigest | None, list[str]]:
    """The digest of the run's comparison.json, if it has one, and each gate the run
    failed (its gates.json's, else its regression gate's): a run that failed one is
    never made ``latest``."""
    gates = files.get(GATES_FILE)
    failed = []
    if gates is not None:
        verdict = validate_json(GateRecord, gates, local_dir / GATES_FILE)
        failed = (verdict.reasons or ["a gate"]) if verdict.failed else []
    raw = files.get("comparison.json")
    if raw is None:
        return None, failed
    record = validate_json(RunComparison, raw, local_dir / "comparison.json")
    digest = comparison_digest(record)
    if record.gate_failed and gates is None:  # a folder from before runs recorded gates
        failed.append("its regression gate")
    return digest, failed


def _read_manifest(
    store: ObjectStore, key: str, eval_set_id: str, retry: Retrier
) -> tuple[RunsManifest, str | None]:
    """The manifest at ``key`` (a new one when absent). An unreadable one is set aside
    under another key rather than overwritten; the note says so."""
    raw = retry(lambda: store.get(key))
    if raw is None:
        return RunsManifest(eval_set_id=eval_set_id), None
    try:
        return validate_json(RunsManifest, raw, key), None
    except UnreadableFile as exc:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        aside = key.removesuffix(".json") + f".unreadable-{stamp}.json"
        retry(lambda: store.put(aside, raw, "application/json", None))
        note = (
            f"{store.describe()}: {key} was not a runs manifest ({exc.problem}); kept it as "
            f"{aside} and started a new one"
        )
        return RunsManifest(eval_set_id=eval_set_id), note


def _upload(
    store: ObjectStore,
    run: RunResult,
    files: dict[str, bytes],
    compared: tuple[ComparisonDigest | None, list[str]],
    retry: Retrier,
) -> tuple[dict[str, str], list[str], HistoryPages]:
    base = key_part(run.eval_set_id)
    folder = run_folder(run)
    urls: dict[str, str] = {}
    for name, body in files.items():
        key = join_key(base, folder, name)
        retry(partial(store.put, key, body, _content_type(name), None))
        urls[name.split(".")[0]] = store.url(key)

    bank_note = _bank_labels(store, files.get(LABELS_FILE), retry)

    manifest_key = join_key(base, "runs.json")
    manifest, note = _read_manifest(store, manifest_key, run.eval_set_id, retry)
    digest, failed_gates = compared
    entry = run_entry(
        run,
        folder,
        list(files),
        comparison=digest,
        gate_failed=bool(failed_gates),
        efficiency=run_efficiency(run),
    )
    manifest = manifest.with_run(entry, run.eval_set_name)
    manifest_body = manifest.model_dump_json(indent=2).encode("utf-8")
    retry(lambda: store.put(manifest_key, manifest_body, "application/json", NO_CACHE))

    pages = publish_history_pages(store, base, manifest, (folder, run), retry)
    urls["index"], urls["explorer"], urls["trend"] = pages.index, pages.explorer, pages.trend

    # latest.json last, and always the newest completed run: publishing an older pending
    # run later adds it to the history without moving "latest" back in time, and a run
    # that is incomplete or failed its regression gate never becomes "latest"
    notes = [found for found in (note, bank_note) if found]
    if not entry.completed:
        if entry.gate_failed:
            why = f"it failed its gate ({'; '.join(failed_gates)})"
        elif not entry.complete:
            planned = len(run.cases) * run.runs_per_case
            why = f"it lacks trials ({run.totals.trials} of {planned} planned)"
        else:
            why = "it measured nothing (no trial passed or failed: each errored or had no verdict)"
        notes.append(f"Not made the eval set's latest run: {why}.")
    newest = manifest.latest_completed()
    latest_key = join_key(base, "latest.json")
    if newest is not None:
        # this run's report: the very link printed and stored with it (a presigned link
        # signed again a second later would differ from it)
        report_url = urls.get("report") if newest.folder == folder else None
        if report_url is None:
            report_url = store.url(join_key(base, newest.folder, "report.html"))
        pointer = LatestPointer.of(run.eval_set_id, newest, report_url)
        latest_body = pointer.model_dump_json(indent=2).encode("utf-8")
        retry(lambda: store.put(latest_key, latest_body, "application/json", NO_CACHE))
        urls["latest"] = store.url(latest_key)
    urls["manifest"] = store.url(manifest_key)
    return urls, notes, pages


def _bank_labels(store: ObjectStore, body: bytes | None, retry: Retrier) -> str | None:
    """Add a run's labels to the store's label bank, where later runs published there
    find them by the content they judged; a note when its labels file is unreadable."""
    if body is None:
        return None
    try:
        labels = labels_from_bytes(body, LABELS_FILE)
    except LabelsFileError as exc:
        return f"labels not added to the label bank: {exc}"
    bank = LabelBank(store)
    retry(lambda: bank.add(labels))
    return None


def _write_marker(local_dir: Path, name: str, data: dict[str, Any]) -> None:
    # beside it, then renamed over it: a link in its place is replaced, not followed
    write_text_atomically(local_dir / name, [json.dumps(data, indent=2, default=str)])


def publish_run(
    local_dir: Path,
    target: str | Path | Target | ObjectStore,
    *,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> PublishOutcome:
    """Upload a finished run directory (report.html, results.json, junit.xml) to
    ``target`` and update the eval set's runs.json, index.html and latest.json.

    ``target`` is ``s3://bucket/prefix``, a directory, a URL in a registered store's
    scheme (:mod:`agentflow_eval.storage.stores`), a parsed target, or any
    :class:`~agentflow_eval.storage.base.ObjectStore`. Returns the outcome: the published URLs,
    or, when the store stayed unreachable or refused, ``published=False`` with a message
    naming the error and the local copy (marked pending for :func:`publish_pending`).
    Raises only for problems with the run directory itself (missing files, unreadable
    results) or an invalid target.
    """
    if isinstance(target, ObjectStore):
        store, resolved = target, None
    else:
        resolved = parse_target(target)
        store = open_store(resolved)
    where = store.describe()
    run, files = _read_run_dir(local_dir)
    compared = _comparison_of(files, local_dir)  # refused before anything is uploaded
    retrier = Retrier(retry or RetryPolicy(), sleep)
    try:
        urls, notes, pages = _upload(store, run, files, compared, retrier)
    except StoreError as exc:
        if resolved is not None:
            record = _PendingRecord(
                target=_without_credentials(resolved),
                error=str(exc),
                attempts=retrier.attempts,
                failed_at=datetime.now(UTC),
            )
            write_text_atomically(local_dir / PENDING_MARKER, [record.model_dump_json(indent=2)])
        why = "the store kept failing" if exc.transient else "the store refused"
        later = (
            f"publish it later with `agentflow-eval publish {local_dir}`"
            if resolved is not None
            else "publish it again when the store is back"
        )
        message = (
            f"not published to {where}: {why} ({exc}; {retrier.attempts} attempt(s)). "
            f"The run is kept at {local_dir}; {later}."
        )
        return PublishOutcome(False, where, local_dir, message, {}, retrier.attempts)

    (local_dir / PENDING_MARKER).unlink(missing_ok=True)
    _write_marker(
        local_dir,
        PUBLISHED_MARKER,
        {
            "target": where,
            "published_at": datetime.now(UTC),
            "urls": urls,
            "links_expire_at": pages.links_until,
        },
    )
    # the report link ends the first line (scripts read it there); the pages get their own
    message = " ".join([f"published to {where}: {urls['report']}", *notes])
    message += "\n" + pages.describe()
    return PublishOutcome(True, where, local_dir, message, urls, retrier.attempts)


def _without_credentials(target: Target) -> Target:
    if isinstance(target, S3Target) and target.credentials is not None:
        return target.model_copy(update={"credentials": None})
    return target


def publish_pending(
    local_dir: Path,
    target: str | Path | Target | None = None,
    *,
    credentials: S3Credentials | None = None,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> PublishOutcome:
    """Publish a run that could not be published before. The target is the one recorded
    in its ``publish-pending.json`` unless given; ``credentials`` apply to a recorded S3
    target (recorded targets never carry credentials)."""
    if target is None:
        marker = local_dir / PENDING_MARKER
        if not marker.is_file():
            raise ValueError(
                f"{local_dir} has no {PENDING_MARKER}: nothing records where it should go; "
                "pass a target (s3://bucket/prefix or a directory)"
            )
        recorded = validate_json(_PendingRecord, read_file_bytes(marker), marker).target
        if isinstance(recorded, S3Target) and credentials is not None:
            recorded = recorded.model_copy(update={"credentials": credentials})
        target = recorded
    return publish_run(local_dir, target, retry=retry, sleep=sleep)


def find_pending(root: Path) -> list[Path]:
    """Run directories under ``root`` (at any depth) still waiting to be published."""
    return sorted(marker.parent for marker in root.rglob(PENDING_MARKER))
