"""The window a batch's first version is compared with: the newest run of the same eval
set and agent, scored by an earlier batch, whose traces ended before this one's began.

A schedule scores a batch every few minutes, and most batches hold one version: without
this, a version would only ever be compared with another version read in the same batch,
and a drop between windows (the same version getting worse, or a version rolled out
between two batches) would go untested. The earlier run is found in the eval set's
history where the runs are kept: the published ``runs.json`` (``publish_to``), else the
run folders under the output folder; its results are read from there.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agentflow_eval.compare.reading import read_run_summary, run_summary_from_stream
from agentflow_eval.files.limits import validate_json
from agentflow_eval.models.results import RunResult
from agentflow_eval.publish.local_runs import local_runs
from agentflow_eval.storage.base import ObjectStore
from agentflow_eval.storage.history import RunEntry, RunsManifest
from agentflow_eval.storage.keys import join_key, key_part

__all__ = ["EarlierWindow", "earlier_entry", "earlier_window"]

BATCH_LABEL = "traces_batch"
"""The label naming the batch a traces run was scored in."""


@dataclass(frozen=True)
class EarlierWindow:
    """The run a batch's first version is compared with."""

    entry: RunEntry
    run: RunResult

    @property
    def name(self) -> str:
        """How the comparison names it: its version and its window."""
        start, end = self.entry.window
        version = self.entry.agent_version or "unversioned"
        return f"agent version {version}, traces {start:%Y-%m-%d %H:%M} to {end:%H:%M} UTC"


def earlier_entry(
    history: RunsManifest, *, agent: str, batch_id: str, before: datetime
) -> RunEntry | None:
    """The newest run of ``agent`` in ``history`` from another batch than ``batch_id``
    whose window ended by ``before``."""
    earlier = [
        entry
        for entry in history.runs
        if entry.agent == agent
        and entry.labels.get(BATCH_LABEL) not in (None, batch_id)
        and entry.window[1] <= before
    ]
    return max(earlier, key=lambda entry: (entry.window[1], entry.folder), default=None)


def earlier_window(
    *,
    eval_set_id: str,
    agent: str,
    batch_id: str,
    before: datetime,
    published: ObjectStore | None,
    output_dir: Path,
) -> EarlierWindow | None:
    """The earlier window (see the module), read from ``published`` (the store runs are
    published to) or, without one, from the run folders under ``output_dir``; None when
    there is none. Raises :class:`~agentflow_eval.errors.StoreError` or
    :class:`~agentflow_eval.errors.InputError` when the history or its results cannot be
    read."""
    if published is not None:
        base = key_part(eval_set_id)
        raw = published.get(join_key(base, "runs.json"))
        if raw is None:
            return None
        history = validate_json(RunsManifest, raw, f"{published.describe()}: {base}/runs.json")
        entry = earlier_entry(history, agent=agent, batch_id=batch_id, before=before)
        if entry is None:
            return None
        key = join_key(base, entry.folder, "results.json")
        body = published.get(key)
        if body is None:
            return None
        return EarlierWindow(entry, run_summary_from_stream(io.BytesIO(body), key))
    if not output_dir.is_dir():
        return None
    for folder, history in local_runs(output_dir).manifests.items():
        if history.eval_set_id != eval_set_id:
            continue
        entry = earlier_entry(history, agent=agent, batch_id=batch_id, before=before)
        if entry is not None:
            results = output_dir / folder / entry.folder / "results.json"
            return EarlierWindow(entry, read_run_summary(results))
    return None
