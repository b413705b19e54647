"""The pages beside a published eval set's runs, written at every publish: ``index.html``
(the runs and trends), ``explorer.html`` (filters, and two runs side by side) and
``trend.html`` (pass rate and efficiency by agent version and window, with each one's
test against the one before it).

Both link to the runs' files. With plain links (a folder, a public or public-read
bucket) the links are relative, so the pages work wherever the folder is served. On a
private bucket with presigned links a relative link is refused (it carries no
signature), so every link in the pages is presigned, each page links to the others with a
presigned link, and the pages are rewritten at every publish: their links then work for
the store's link lifetime from the last publish.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Protocol, TypeVar

from agentflow_eval.compare.reading import run_summary_from_stream
from agentflow_eval.errors import InputError
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.explorer_data import EXPLORER_COMPARED_RUNS, explorer_data
from agentflow_eval.report.explorer_page import render_explorer
from agentflow_eval.report.index_page import render_index
from agentflow_eval.report.trend_data import trend_data
from agentflow_eval.report.trend_page import render_trend
from agentflow_eval.storage import LocalStore, S3Store, presigned_lifetime_s
from agentflow_eval.storage.base import ObjectStore, ReadableStream
from agentflow_eval.storage.history import RunsManifest
from agentflow_eval.storage.keys import join_key

__all__ = ["HistoryPages", "publish_history_pages"]

HTML = "text/html; charset=utf-8"
NO_CACHE = "no-cache"  # rewritten with every run

T = TypeVar("T")


class Retry(Protocol):
    """Runs a store operation, retrying transient failures
    (:class:`~agentflow_eval.publish.publisher.Retrier`)."""

    def __call__(self, operation: Callable[[], T]) -> T: ...


@dataclass(frozen=True)
class HistoryPages:
    """Where the pages are, and until when their links work (None: no expiry)."""

    index: str
    explorer: str
    links_until: datetime | None
    trend: str = ""

    def describe(self) -> str:
        """One line for the published message: the pages, and how long links last."""
        line = f"Runs index: {self.index} · explorer: {self.explorer}"
        if self.trend:
            line += f" · trend: {self.trend}"
        if self.links_until is None:
            return line
        return (
            f"{line}  (presigned links, valid until {self.links_until:%Y-%m-%d %H:%M} UTC; "
            "every publish writes the index and explorer with fresh ones)."
        )


def _open(store: ObjectStore, key: str) -> ReadableStream | None:
    if isinstance(store, (S3Store, LocalStore)):
        return store.open(key)  # read only up to the trials, never them
    raw = store.get(key)
    return None if raw is None else io.BytesIO(raw)


def _read_summary(store: ObjectStore, key: str, source: str) -> RunResult | None:
    stream = _open(store, key)
    if stream is None:
        return None
    try:
        return run_summary_from_stream(stream, source)
    finally:
        stream.close()


def _summaries(
    store: ObjectStore,
    base: str,
    manifest: RunsManifest,
    current: tuple[str, RunResult],
    retry: Retry,
) -> tuple[dict[str, RunResult], list[str]]:
    """The results of the runs the explorer compares, by folder, and what could not be
    read (named on the page, never silently left out)."""
    summaries = {current[0]: current[1]}
    notes: list[str] = []
    for entry in manifest.runs[:EXPLORER_COMPARED_RUNS]:
        if entry.folder in summaries:
            continue
        source = f"{entry.folder}/results.json"
        try:
            key = join_key(base, entry.folder, "results.json")
            summary = retry(partial(_read_summary, store, key, source))
        except InputError as exc:
            notes.append(f"{exc}: that run is not compared")
            continue
        if summary is None:
            notes.append(f"{source} is missing: that run is not compared")
            continue
        summaries[entry.folder] = summary
    return summaries, notes


def publish_history_pages(
    store: ObjectStore,
    base: str,
    manifest: RunsManifest,
    current: tuple[str, RunResult],
    retry: Retry,
    *,
    now: datetime | None = None,
) -> HistoryPages:
    """Write ``explorer.html``, ``trend.html`` and ``index.html`` of the eval set under ``base`` for
    ``manifest`` (which holds ``current``: the folder and results of the run being
    published). Raises :class:`~agentflow_eval.errors.StoreError`."""
    lifetime = presigned_lifetime_s(store)
    index_key, explorer_key = join_key(base, "index.html"), join_key(base, "explorer.html")
    trend_key = join_key(base, "trend.html")
    if lifetime is None:
        index_link, explorer_link, trend_link = "index.html", "explorer.html", "trend.html"
        links_until = None

        def link(folder: str, name: str) -> str:
            return f"{folder}/{name}"

    else:
        index_link, explorer_link = store.url(index_key), store.url(explorer_key)
        trend_link = store.url(trend_key)
        links_until = (now or datetime.now(UTC)) + timedelta(seconds=lifetime)

        def link(folder: str, name: str) -> str:
            return store.url(join_key(base, folder, name))

    summaries, notes = _summaries(store, base, manifest, current, retry)
    data = explorer_data(manifest, summaries, link, notes=notes)
    explorer_body = render_explorer(
        data, index_link=index_link, trend_link=trend_link, links_until=links_until
    ).encode("utf-8")
    retry(partial(store.put, explorer_key, explorer_body, HTML, NO_CACHE))
    trend_body = render_trend(
        trend_data(manifest, link),
        index_link=index_link,
        explorer_link=explorer_link,
        links_until=links_until,
    ).encode("utf-8")
    retry(partial(store.put, trend_key, trend_body, HTML, NO_CACHE))
    index_body = render_index(
        manifest,
        link=link,
        explorer_link=explorer_link,
        trend_link=trend_link,
        links_until=links_until,
    ).encode("utf-8")
    retry(partial(store.put, index_key, index_body, HTML, NO_CACHE))
    return HistoryPages(
        store.url(index_key), store.url(explorer_key), links_until, store.url(trend_key)
    )
