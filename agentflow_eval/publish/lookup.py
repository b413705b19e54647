"""Finding a published run again: in an eval set's ``runs.json`` by one of its labels (a
regression suite labels each of its runs), and the files beside it."""

from __future__ import annotations

from pydantic import ValidationError

from agentflow_eval.compare.models import RunComparison
from agentflow_eval.publish.history import RunEntry, RunsManifest
from agentflow_eval.publish.storage import ObjectStore, StoreError, join_key, key_part

__all__ = ["find_labelled_run", "published_comparison", "published_url"]


def find_labelled_run(
    store: ObjectStore, eval_set_id: str, key: str, value: str
) -> RunEntry | None:
    """The newest published run of ``eval_set_id`` whose label ``key`` is ``value``, or
    None when there is none (or no runs.json yet). Raises :class:`StoreError`."""
    raw = store.get(join_key(key_part(eval_set_id), "runs.json"))
    if raw is None:
        return None
    try:
        manifest = RunsManifest.model_validate_json(raw)
    except ValidationError as exc:
        raise StoreError(
            f"{store.describe()}: {eval_set_id}/runs.json is not a runs manifest "
            f"({exc.error_count()} problem(s))",
            transient=False,
        ) from None
    return next((run for run in manifest.runs if run.labels.get(key) == value), None)


def published_url(store: ObjectStore, eval_set_id: str, entry: RunEntry, name: str) -> str:
    """Where a person opens file ``name`` of the published run ``entry``."""
    return store.url(join_key(key_part(eval_set_id), entry.folder, name))


def published_comparison(
    store: ObjectStore, eval_set_id: str, entry: RunEntry
) -> RunComparison | None:
    """The comparison.json published with ``entry``, or None for a run not compared."""
    if "comparison.json" not in entry.files:
        return None
    raw = store.get(join_key(key_part(eval_set_id), entry.folder, "comparison.json"))
    return None if raw is None else RunComparison.model_validate_json(raw)
