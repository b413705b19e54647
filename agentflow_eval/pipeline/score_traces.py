"""Scoring production traces, one call for every front door::

    outcome = await score_traces(request)                        # in this process
    outcome = await score_traces(request, PrefectTracesRuntime()) # the evaluate-traces flow

A batch reads the source's new trace objects into a recording per agent version
(:func:`agentflow_eval.traces.intake.read_new_traces`: cursor, sampling, limits,
redaction), then scores each recording as a run of its own — an ordinary run request with
``rejudge_from`` naming the recording, through :func:`.execute.execute` (the same stage
list, judge cache, retries, results, report and publishing as any run; no agent runs) —
and adds the traces that failed to the candidates eval set
(:mod:`agentflow_eval.traces.candidates`). Each version is then compared with the one
whose traces began before it (:mod:`agentflow_eval.traces.versions`); the comparison is
the version's run's ``comparison.json`` (its baseline is the version before it), and a
published run is published again with it, so the eval set's history and its trend page
name the test that called a drop. A batch that stopped is resumed from its
folder (``resume``): what it read is kept, the versions it scored are not scored again.

Bad input is refused here, in one line, before anything is claimed: a source or results
store that cannot list, results kept inside the source, a config with criteria that need
a reference a production trace does not have.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from agentflow_eval.compare.baseline import write_run_comparison
from agentflow_eval.compare.brief import comparison_lines
from agentflow_eval.compare.models import BaselineProblem, RunComparison
from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.criteria.registry import spec_of
from agentflow_eval.errors import InputError, StoreError
from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.files.errors import first_reason
from agentflow_eval.files.loading import max_file_bytes
from agentflow_eval.files.naming import safe_id
from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.models import defaults
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.traces_request import TracesRequest
from agentflow_eval.pipeline.earlier_window import earlier_window
from agentflow_eval.pipeline.execute import Runtime, execute
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.pipeline.stages import publish_stage
from agentflow_eval.publish.publisher import PublishOutcome
from agentflow_eval.storage.base import ListingStore
from agentflow_eval.storage.keys import key_part
from agentflow_eval.storage.stores import open_store
from agentflow_eval.storage.targets import LocalTarget, S3Credentials, S3Target, Target, target_of
from agentflow_eval.traces.batch import BatchFolder, new_batch_id
from agentflow_eval.traces.bounds import Limits
from agentflow_eval.traces.candidates import Candidates, add_candidates, failed_traces
from agentflow_eval.traces.cursor import Cursor
from agentflow_eval.traces.intake import IntakeOptions, read_new_traces
from agentflow_eval.traces.recording import EVALSET_FILE
from agentflow_eval.traces.summary import IntakeSummary, VersionRecording
from agentflow_eval.traces.versions import compare_versions

__all__ = [
    "TracesOutcome",
    "TracesPlan",
    "TracesRuntime",
    "VersionScored",
    "plan_traces",
    "score_traces",
]

CURSOR_FOLDER = "traces-cursor"
"""Where the cursor's markers are kept in the results store: ``<results>/traces-cursor/
<source>/done/...``."""

_NEEDS_NO_REFERENCE = frozenset({"rubrics"})
"""What a criterion may judge against and still score a production trace: rubrics come
from the config."""


@dataclass(frozen=True)
class TracesPlan:
    """A batch, decided once: where it reads, keeps its cursor and writes."""

    request: TracesRequest
    source: ListingStore
    cursor: Cursor
    batch: BatchFolder
    options: IntakeOptions
    candidates_to: Path
    publish_to: Target | None = None
    """Where the versions' runs are published (None: they are not)."""


@dataclass(frozen=True)
class VersionScored:
    """One agent version's traces, scored."""

    recording: VersionRecording
    outcome: RunOutcome
    candidates: Candidates | None
    comparison: RunComparison | None = None
    """Against the version before it (the one whose traces began earlier), if any."""


class TracesOutcome:
    """What a batch read, the run each version was scored in, the candidates added.

    A plain class, as :class:`~.outcome.RunOutcome` is: Prefect does not walk it when the
    flow returns it."""

    __slots__ = ("batch_dir", "intake", "versions")

    def __init__(self, batch_dir: Path, intake: IntakeSummary) -> None:
        self.batch_dir = batch_dir
        self.intake = intake
        self.versions: list[VersionScored] = []

    @property
    def candidates_added(self) -> int:
        return sum(v.candidates.added for v in self.versions if v.candidates is not None)

    def lines(self, shown: Callable[[Path], str] = str, *, batch: bool = True) -> list[str]:
        """What the batch did, for people: the intake, then each version's run (paths as
        ``shown`` writes them), then, with ``batch``, the batch's folder."""
        lines = self.intake.lines()
        for scored in self.versions:
            run, totals = scored.outcome.run, scored.outcome.run.totals
            where = scored.outcome.report_url or shown(scored.outcome.run_dir / "report.html")
            lines.append(
                f"{run.agent} {scored.recording.agent_version}: {totals.trials:,} trace(s) "
                f"scored, pass rate {totals.pass_rate:.1%} (95% CI {totals.ci_low:.1%} to "
                f"{totals.ci_high:.1%}), window {scored.recording.window_start:%Y-%m-%d %H:%M} "
                f"to {scored.recording.window_end:%Y-%m-%d %H:%M} UTC: {where}"
            )
            if scored.comparison is not None:
                lines.append(f"  against {scored.comparison.baseline}:")
                lines.extend(f"  {line}" for line in comparison_lines(scored.comparison)[1:])
            if scored.candidates is not None and scored.candidates.added:
                lines.append(
                    f"  {scored.candidates.added} failing trace(s) added as candidate cases "
                    f"to {shown(scored.candidates.path)}"
                )
        trend = next(
            (
                scored.outcome.publish.urls["trend"]
                for scored in reversed(self.versions)
                if scored.outcome.publish is not None and "trend" in scored.outcome.publish.urls
            ),
            None,
        )
        if trend is not None:
            lines.append(f"pass rate and efficiency by version and window: {trend}")
        if batch and self.batch_dir.is_dir():
            lines.append(f"batch {shown(self.batch_dir)}")
        return lines


class TracesRuntime:
    """How a batch is carried out: this class reads and scores in this process (each
    version's run with the direct :class:`~.execute.Runtime` given); the flow's runtime
    reads in a task run and scores each version in a run of the evaluate flow."""

    def __init__(self, runtime: Runtime | None = None) -> None:
        self.runtime = runtime if runtime is not None else Runtime()

    async def s3_credentials(self, request: TracesRequest) -> S3Credentials | None:
        """S3 credentials beyond the standard AWS chain (the flow: a Secret block)."""
        return None

    async def intake(self, plan: TracesPlan) -> IntakeSummary:
        """Read the new traces (blocking work, in a thread)."""
        return await asyncio.to_thread(
            read_new_traces, plan.source, plan.cursor, plan.batch, plan.options
        )

    async def score(self, request: RunRequest) -> RunOutcome:
        """Score one version's recording."""
        return await execute(request, self.runtime)

    async def publish(self, run_dir: Path, target: Target) -> PublishOutcome:
        """Publish a scored version's run again, with its comparison."""
        return await publish_stage(run_dir, target)


async def score_traces(
    request: TracesRequest, runtime: TracesRuntime | None = None, *, batch_id: str | None = None
) -> TracesOutcome:
    """Read the source's new traces and score them (see the module). ``batch_id`` names
    the batch (the flow: its flow run's id, so a retry of the flow run goes on with the
    batch it started); a batch of that id that exists is resumed."""
    how = runtime if runtime is not None else TracesRuntime()
    plan = plan_traces(request, await how.s3_credentials(request), batch_id=batch_id)
    intake = await how.intake(plan)
    outcome = TracesOutcome(batch_dir=plan.batch.root, intake=intake)
    if not intake.counts.objects_read and not intake.versions:
        shutil.rmtree(plan.batch.root, ignore_errors=True)  # nothing read: nothing to keep
        return outcome
    scored = plan.batch.scored()
    for version in intake.versions:
        folder = Path(version.folder)
        if version.agent_version in scored:
            run_dir = Path(scored[version.agent_version])
            run = read_results_json(run_dir / "results.json")
            done = RunOutcome(run=run, run_dir=run_dir)
        else:
            done = await how.score(
                plan.request.run_request(
                    rejudge_from=str(folder), evalset=str(folder / EVALSET_FILE)
                )
            )
            plan.batch.mark_scored(version.agent_version, done.run_dir)
        cases = list(
            failed_traces(
                done.run_dir / "judged.jsonl",
                folder,
                source=request.source,
                agent_version=version.agent_version,
                run_id=done.run.run_id,
            )
        )
        candidates = (
            add_candidates(
                plan.candidates_to, cases, eval_set_id=f"{plan.options.eval_set_id}-candidates"
            )
            if cases
            else None
        )
        outcome.versions.append(VersionScored(version, done, candidates))
    outcome.versions = _compared(outcome.versions, plan)
    if plan.publish_to is not None:
        for compared in outcome.versions:
            if compared.comparison is not None and compared.outcome.publish is not None:
                await how.publish(compared.outcome.run_dir, plan.publish_to)
    return outcome


def _compared(versions: list[VersionScored], plan: TracesPlan) -> list[VersionScored]:
    """Each version, in the order its traces began, compared with the one before it
    (:func:`agentflow_eval.traces.versions.compare_versions`): the first with the window
    an earlier batch scored before it (:mod:`.earlier_window`), if any, the others with
    the version before them in this batch. Each comparison is kept in the version's
    recording and in its run's folder as ``comparison.json``."""
    ordered = sorted(versions, key=lambda v: v.recording.window_start)
    if not ordered:
        return ordered
    by_case = plan.request.case_attribute is not None
    compared = [replace(ordered[0], comparison=_against_earlier_window(ordered[0], plan))]
    for before, after in itertools.pairwise(ordered):
        record = compare_versions(
            (before.recording.agent_version, before.outcome.run, Path(before.recording.folder)),
            (after.recording.agent_version, after.outcome.run, Path(after.recording.folder)),
            alpha=plan.request.alpha,
            by_case=by_case,
        )
        compared.append(replace(after, comparison=record))
    for version in compared:
        if version.comparison is not None:
            write_text_atomically(
                Path(version.recording.folder) / "comparison.json",
                [version.comparison.model_dump_json(indent=2)],
            )
            write_run_comparison(version.outcome.run_dir, version.comparison)
    return compared


def _against_earlier_window(first: VersionScored, plan: TracesPlan) -> RunComparison | None:
    """``first`` against the window an earlier batch scored before it; None when no
    earlier batch scored one. A history that cannot be read is said in the record."""
    try:
        earlier = earlier_window(
            eval_set_id=first.outcome.run.eval_set_id,
            agent=first.outcome.run.agent,
            batch_id=plan.batch.batch_id,
            before=first.recording.window_start,
            published=open_store(plan.publish_to) if plan.publish_to is not None else None,
            output_dir=Path(plan.request.output_dir),
        )
    except (InputError, StoreError, OSError, ValueError) as exc:
        return RunComparison(
            baseline="the window before",
            problem=BaselineProblem(
                kind="unavailable",
                message=first_reason(exc)
                if isinstance(exc, ValueError)
                else " ".join(str(exc).split()),
            ),
        )
    if earlier is None:
        return None
    return compare_versions(
        (earlier.entry.agent_version or "unversioned", earlier.run, None),
        (first.recording.agent_version, first.outcome.run, Path(first.recording.folder)),
        alpha=plan.request.alpha,
        by_case=plan.request.case_attribute is not None,
        baseline_name=earlier.name,
    )


def plan_traces(
    request: TracesRequest,
    credentials: S3Credentials | None = None,
    *,
    batch_id: str | None = None,
) -> TracesPlan:
    """The batch ``request`` asks for (a new one, the one ``resume`` names, or the one
    ``batch_id`` names when it exists), its inputs checked;
    :class:`~agentflow_eval.errors.InputError` (one line) otherwise."""
    if not request.resume and batch_id is not None:
        named = _batch_root(request, batch_id)
        if named.request_path.is_file():
            request = request.updated(resume=str(named.root))
    if request.resume:
        request = _resumed(request)
    source_target = _target("source", request.source, request, credentials)
    results_at = request.publish_to or request.output_dir
    results_target = _target("results", results_at, request, credentials)
    _check_apart(source_target, results_target, Path(request.output_dir))
    _check_reference_free(request)
    source = _listing("source", source_target)
    results = _listing("publish_to" if request.publish_to else "output_dir", results_target)
    slug = _slug(source_target)
    eval_set_id = request.eval_set_id or f"traces-{_last_part(source_target)}"
    if request.resume:
        batch = BatchFolder(Path(request.resume).resolve())
    else:
        batch = _batch_root(request, batch_id or new_batch_id())
        batch.create(request.model_dump(mode="json"))
    options = IntakeOptions(
        source=request.source,
        eval_set_id=eval_set_id,
        version_attribute=request.version_attribute,
        case_attribute=request.case_attribute,
        strata=tuple(request.strata),
        sample_rate=request.sample_rate,
        include=tuple(request.include),
        max_objects=request.max_objects,
        limits=Limits(max_chars=defaults.TRACE_MAX_CHARS, max_depth=defaults.TRACE_MAX_DEPTH),
        max_line_bytes=int(request.max_file_mb * 1024 * 1024),
    )
    candidates_to = Path(
        request.candidates_to
        or Path(request.output_dir) / f"{safe_id(eval_set_id)}.candidates.evalset.json"
    )
    return TracesPlan(
        request=request,
        source=source,
        cursor=Cursor(results, f"{CURSOR_FOLDER}/{slug}"),
        batch=batch,
        options=options,
        candidates_to=candidates_to,
        publish_to=results_target if request.publish_to else None,
    )


def _batch_root(request: TracesRequest, batch_id: str) -> BatchFolder:
    """The folder of batch ``batch_id`` of ``request``'s source."""
    try:
        source = target_of(request.source, request.s3)
    except ValueError as exc:
        raise InputError(f"source {request.source}: {first_reason(exc)}") from None
    return BatchFolder(
        Path(request.output_dir).resolve() / "traces" / _slug(source) / key_part(batch_id)
    )


def _resumed(request: TracesRequest) -> TracesRequest:
    """A resumed batch's request: the one it was started with, delivered where this one
    says (publishing, labels, timeout)."""
    assert request.resume is not None
    batch = BatchFolder(Path(request.resume))
    if not batch.request_path.is_file():
        raise InputError(
            f"resume {request.resume}: not a batch folder (no request.json); pass the folder "
            "a traces run printed as 'batch'"
        )
    started = TracesRequest.model_validate(batch.request())
    return started.updated(
        resume=request.resume,
        publish_to=request.publish_to or started.publish_to,
        labels={**started.labels, **request.labels},
        timeout_minutes=request.timeout_minutes,
    )


def _target(
    what: str, text: str, request: TracesRequest, credentials: S3Credentials | None
) -> Target:
    try:
        return target_of(text, request.s3, credentials)
    except ValueError as exc:
        raise InputError(f"{what} {text}: {first_reason(exc)}") from None


def _listing(what: str, target: Target) -> ListingStore:
    try:
        store = open_store(target)
    except ValueError as exc:
        raise InputError(f"{what}: {first_reason(exc)}") from None
    if not isinstance(store, ListingStore):
        raise InputError(
            f"{what} {target.describe()}: this store cannot list its objects or create one "
            "only where none is, which reading traces once needs; use a folder or s3://"
        )
    return store


def _check_apart(source: Target, results: Target, output_dir: Path) -> None:
    """Results, run folders and the cursor may not be kept among the traces: they would
    be read as traces."""
    if isinstance(source, LocalTarget):
        root = source.path.resolve()
        for where in (output_dir, results.path if isinstance(results, LocalTarget) else None):
            if where is not None and where.resolve().is_relative_to(root):
                raise InputError(
                    f"output {where}: inside the traces' folder {source.path}; keep results "
                    "apart from the traces, or they are read as traces"
                )
    if isinstance(source, S3Target) and isinstance(results, S3Target):
        inside = results.bucket == source.bucket and (
            not source.prefix or f"{results.prefix}/".startswith(f"{source.prefix}/")
        )
        if inside:
            raise InputError(
                f"publish_to {results.url}: inside the traces' prefix {source.url}; keep "
                "results apart from the traces, or they are read as traces"
            )


def _check_reference_free(request: TracesRequest) -> None:
    """The config must load, and its criteria must need no reference."""
    config = load_config(request.config, max_bytes=max_file_bytes(None))
    needing = []
    for name in config.criteria:
        spec = spec_of(name)
        wanted = set(spec.judges) - _NEEDS_NO_REFERENCE if spec is not None else set()
        if wanted:
            needing.append(f"{name} ({', '.join(sorted(wanted))})")
    if needing:
        raise InputError(
            f"config {request.config}: {', '.join(needing)} compare with a reference a "
            "production trace does not have; score traces with criteria that need none "
            "(rubrics, hallucinations, safety, budgets, custom checks)"
        )


def _slug(target: Target) -> str:
    """The source as one key segment: its last part and a digest of all of it."""
    described = str(target.path.resolve()) if isinstance(target, LocalTarget) else target.describe()
    digest = hashlib.sha256(described.encode()).hexdigest()[:8]
    return f"{key_part(_last_part(target), max_length=40)}-{digest}"


def _last_part(target: Target) -> str:
    if isinstance(target, LocalTarget):
        return target.path.resolve().name or "traces"
    if isinstance(target, S3Target):
        return (target.prefix.rsplit("/", 1)[-1] if target.prefix else target.bucket) or "traces"
    return target.key.rsplit("/", 1)[-1] or "traces"
