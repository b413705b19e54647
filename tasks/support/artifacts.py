"""What a run shows in the Prefect UI: a table of cases, a markdown summary, a link to the
published report, and a progress bar while trials run.

Artifact keys follow Prefect's rule (lowercase letters, digits and dashes) and are made
from the deployment, the run's history (track), the agent and the eval set, so the runs
of one agent on one eval set by one deployment in one history version together in the
Artifacts page, apart from other agents', other deployments' and other histories' runs
(a nightly suite's runs of ``evaluate/adhoc`` apart from runs started by hand):
``<deployment>-<track>-<agent>-<eval-set>-cases``, ``-summary``, ``-report``,
``-progress``, ``-comparison`` and ``-pr-summary`` (a run outside a deployment has no
deployment part, one without a recorded track no track part).

Call these from inside a flow or task run (they attach to it). The functions are async,
as the evaluate flow is; :meth:`ProgressReporter.update` is a plain function so it can
be the trial loop's ``on_trial`` callback.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

from prefect.artifacts import (
    acreate_link_artifact,
    acreate_markdown_artifact,
    acreate_progress_artifact,
    acreate_table_artifact,
    aupdate_progress_artifact,
)

from agentflow_eval.compare.models import RunComparison
from agentflow_eval.files.naming import artifact_key
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.markdown import cases_table, comparison_rows, pct, summary_markdown
from agentflow_eval.report.pull_request import run_comparison_comment

__all__ = [
    "ArtifactKeys",
    "ArtifactScope",
    "ProgressReporter",
    "RunArtifacts",
    "agent_key",
    "artifact_keys",
    "publish_run_artifacts",
]

KEY_BASE_MAX = 80

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ArtifactKeys:
    """The artifact keys of one eval set."""

    cases: str
    summary: str
    report: str
    progress: str
    comparison: str
    pr_summary: str


@dataclass(frozen=True)
class ArtifactScope:
    """Whose history a run's artifacts join: its deployment and its agent (either may be
    unknown: a run outside a deployment, a test flow)."""

    deployment: str | None = None
    agent: str | None = None
    track: str | None = None

    @classmethod
    def current(cls, track: str | None = None) -> ArtifactScope:
        """The scope of the flow run this code runs in (its deployment's name and the
        ``agent`` parameter, read from Prefect's runtime context) in history ``track``."""
        from prefect.runtime import deployment, flow_run

        try:
            spec = (flow_run.parameters or {}).get("agent")
        except Exception:  # no flow run context: no scope
            spec = None
        name = deployment.name
        return cls(
            deployment=name if isinstance(name, str) else None,
            agent=agent_key(spec) if isinstance(spec, str) and spec else None,
            track=track,
        )


def agent_key(spec: str) -> str:
    """A stable name for the agent a spec points at, for artifact keys: the module path
    and attribute (``pkg.mod:agent``), a file's stem and attribute (``v2_agent:agent``,
    whatever folder the file is in), or an endpoint's host and path."""
    if spec.startswith(("http://", "https://")):
        parts = urlsplit(spec)
        return f"{parts.hostname or 'http'}{parts.path}".rstrip("/")
    target, _, attr = spec.rpartition(":") if ":" in spec else (spec, "", "")
    if target.endswith(".py") or "/" in target:
        target = PurePosixPath(target.replace("\\", "/")).stem
    return f"{target}:{attr}" if attr else target


def artifact_keys(eval_set_id: str, scope: ArtifactScope | None = None) -> ArtifactKeys:
    """Keys for the artifacts of ``eval_set_id``'s runs in ``scope``: lowercase letters,
    digits and dashes only. A base too long is cut and given a hash of the whole, so two
    long names never share keys."""
    parts = [scope.deployment, scope.track, scope.agent] if scope else []
    full = "-".join(artifact_key(part) for part in [*parts, eval_set_id] if part)
    base = full[:KEY_BASE_MAX].strip("-") or "agentflow-eval"
    if len(full) > KEY_BASE_MAX:
        digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:8]
        base = f"{base[: KEY_BASE_MAX - 9].strip('-')}-{digest}"
    return ArtifactKeys(
        cases=f"{base}-cases",
        summary=f"{base}-summary",
        report=f"{base}-report",
        progress=f"{base}-progress",
        comparison=f"{base}-comparison",
        pr_summary=f"{base}-pr-summary",
    )


@dataclass(frozen=True)
class RunArtifacts:
    """The ids of the artifacts :func:`publish_run_artifacts` created."""

    cases: UUID
    summary: UUID
    report: UUID | None
    comparison: UUID | None = None
    pr_summary: UUID | None = None


async def publish_run_artifacts(
    run: RunResult,
    report_url: str | None,
    *,
    local_report: Path | None = None,
    publish_problem: str | None = None,
    scope: ArtifactScope | None = None,
    comparison: RunComparison | None = None,
    notes: Sequence[str] = (),
) -> RunArtifacts:
    """Create the run's table, summary and (when there is a report URL) link artifacts,
    and, for a run given a baseline, the comparison's table and its Markdown summary fit
    for a pull-request comment (or why it was not compared), attached to the
    current flow or task run, keyed by ``scope`` (default: the current flow run's
    deployment and agent)."""
    keys = artifact_keys(run.eval_set_id, scope if scope is not None else ArtifactScope.current())
    title = run.eval_set_name or run.eval_set_id
    cases = await acreate_table_artifact(
        cases_table(run),
        key=keys.cases,
        description=f"{title}: pass rate and criterion means per case (run {run.run_id})",
    )
    summary = await acreate_markdown_artifact(
        summary_markdown(
            run,
            report_url,
            local_report=local_report,
            publish_problem=publish_problem,
            comparison=comparison,
            notes=notes,
        ),
        key=keys.summary,
        description=(
            f"{title}: {pct(run.totals.pass_rate)} of {run.totals.rated_trials} trials passed"
        ),
    )
    link = None
    if report_url:
        link = await acreate_link_artifact(
            report_url,
            link_text=f"{title} report ({pct(run.totals.pass_rate)} passed)",
            key=keys.report,
            description=f"The HTML report of run {run.run_id}",
        )
    table = None
    if comparison is not None and comparison.comparison is not None:
        compared = comparison.comparison
        table = await acreate_table_artifact(
            comparison_rows(comparison),
            key=keys.comparison,
            description=f"{title}: run {run.run_id} against baseline run "
            f"{compared.baseline.run_id}: {compared.overall.verdict}",
        )
    pr_summary = None
    if comparison is not None:
        pr_summary = await acreate_markdown_artifact(
            run_comparison_comment(comparison, run.eval_set_id, report_url=report_url),
            key=keys.pr_summary,
            description=f"{title}: the comparison with the baseline, as a pull-request comment",
        )
    return RunArtifacts(cases, summary, link, table, pr_summary)


class ProgressReporter:
    """A progress artifact for a long stage (trials, judging), updated at most once per
    ``min_interval_s`` unless the progress moved by ``min_step`` (a fraction) since the
    last update, with never more than one update in flight.

    ``await start(total)``; then ``update(done)`` or ``advance()`` from the loop (plain
    calls, safe in a callback: the API call is scheduled on the running event loop);
    ``await finish()`` at the end flushes and shows the final value.
    """

    def __init__(
        self,
        key: str,
        description: str,
        *,
        min_interval_s: float = 1.0,
        min_step: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.key = key
        self.description = description
        self.min_interval_s = min_interval_s
        self.min_step = min_step
        self._clock = clock
        self.artifact_id: UUID | None = None
        self.total = 0
        self.done = 0
        self.sent = 0.0
        self.updates_sent = 0
        self._sent_at = 0.0
        self._in_flight: asyncio.Task[None] | None = None

    @classmethod
    def for_eval_set(
        cls,
        eval_set_id: str,
        what: str = "trials",
        scope: ArtifactScope | None = None,
        *,
        track: str | None = None,
        **options: Any,
    ) -> ProgressReporter:
        """A reporter keyed ``<deployment>-<agent>-<eval-set>-progress`` (``scope``
        default: the current flow run's)."""
        keys = artifact_keys(
            eval_set_id, scope if scope is not None else ArtifactScope.current(track)
        )
        return cls(keys.progress, f"{eval_set_id}: {what} done", **options)

    def percent(self) -> float:
        return 100.0 if self.total <= 0 else min(100.0, 100.0 * self.done / self.total)

    async def start(self, total: int, done: int = 0) -> UUID:
        """Create the artifact at ``done`` of ``total`` (a resumed run starts part way)."""
        if total < 0 or not 0 <= done <= max(total, 0):
            raise ValueError(f"progress needs 0 <= done <= total, got done={done}, total={total}")
        self.total, self.done = total, done
        self.sent = self.percent()
        self._sent_at = self._clock()
        self.artifact_id = await acreate_progress_artifact(
            self.sent, key=self.key, description=self.description
        )
        return self.artifact_id

    def advance(self, count: int = 1, *_: Any) -> None:
        """``count`` more done (extra arguments are ignored, so it fits ``on_trial``)."""
        self.update(self.done + count)

    def update(self, done: int) -> None:
        """Record ``done``; send it when due and nothing is in flight. Call it from code
        running in the event loop (the update is scheduled there, never awaited here)."""
        if self.artifact_id is None:
            raise RuntimeError("ProgressReporter.update() before start()")
        self.done = min(done, self.total) if self.total else done
        self._maybe_send()

    def _due(self) -> bool:
        progress = self.percent()
        if progress <= self.sent:
            return False
        moved = progress - self.sent >= self.min_step * 100
        waited = self._clock() - self._sent_at >= self.min_interval_s
        return moved or waited or progress >= 100.0

    def _maybe_send(self) -> None:
        if self._in_flight is not None and not self._in_flight.done():
            return
        if not self._due():
            return
        loop = asyncio.get_running_loop()
        self._in_flight = loop.create_task(self._send(self.percent()))

    async def _send(self, progress: float) -> None:
        """One API call. A progress bar must never fail the run: errors are logged."""
        assert self.artifact_id is not None
        self.sent = progress
        self._sent_at = self._clock()
        self.updates_sent += 1
        try:
            await aupdate_progress_artifact(self.artifact_id, progress)
        except Exception as exc:
            logger.warning("progress artifact %s not updated: %s", self.key, exc)

    async def flush(self) -> None:
        """Wait for the update in flight, if any."""
        if self._in_flight is not None:
            await self._in_flight

    async def finish(self) -> None:
        """Wait for the update in flight, then send the final value if it was not sent."""
        await self.flush()
        if self.artifact_id is not None and self.percent() != self.sent:
            await self._send(self.percent())
