"""Writing and publishing a regression suite run's summary.

Layout, locally under the output folder and under the publish target alike::

    regression/<suite>/<UTC start>-<flow run>/summary.json   the SuiteSummary
                                             /summary.html   the same as a page
    regression/<suite>/latest.json                            the newest suite run (target only)

The local copy is written first, so a store that is down loses nothing: the outcome says
where the summary is kept. ``latest.json`` is written after the run's own files, so it
never points at a summary that is not all there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from pydantic import BaseModel

from agentflow_eval.compare.suite import SuiteSummary, SuiteVerdict
from agentflow_eval.errors import StoreError
from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.publish.publisher import CONTENT_TYPES, NO_CACHE, Retrier, RetryPolicy
from agentflow_eval.report.suite_page import render_suite_summary
from agentflow_eval.storage.base import ObjectStore
from agentflow_eval.storage.keys import join_key, key_part

__all__ = [
    "SUITES_FOLDER",
    "SuiteLatest",
    "SuitePublishOutcome",
    "publish_suite_summary",
    "suite_folder",
    "write_suite_summary",
]

SUITES_FOLDER = "regression"
"""Where suite summaries sit under a publish target, beside the eval sets' folders."""


def suite_folder(summary: SuiteSummary) -> str:
    """The suite run's folder: ``<UTC start, 20261120T030000Z>-<flow run id or name>``."""
    started = summary.started_at.astimezone(UTC)
    who = summary.flow_run_id or summary.flow_run_name or "local"
    return key_part(f"{started:%Y%m%dT%H%M%SZ}-{key_part(who, max_length=60)}")


def _keys(summary: SuiteSummary) -> tuple[str, str]:
    """The suite's folder and this run's, as object keys."""
    suite = key_part(summary.suite)
    return join_key(SUITES_FOLDER, suite), join_key(SUITES_FOLDER, suite, suite_folder(summary))


def _files(summary: SuiteSummary) -> dict[str, str]:
    return {
        "summary.json": summary.model_dump_json(indent=2),
        "summary.html": render_suite_summary(summary),
    }


def write_suite_summary(summary: SuiteSummary, output_dir: Path) -> Path:
    """Write summary.json and summary.html under ``output_dir``; return their folder."""
    _, run_key = _keys(summary)
    folder = output_dir.joinpath(*run_key.split("/"))
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in _files(summary).items():
        write_text_atomically(folder / name, [text])
    return folder


class SuiteLatest(BaseModel):
    """``regression/<suite>/latest.json``: the suite's newest run and its verdict."""

    suite: str
    folder: str
    flow_run_id: str | None = None
    started_at: datetime
    verdict: SuiteVerdict
    summary: str
    summary_url: str


@dataclass(frozen=True)
class SuitePublishOutcome:
    """What publishing the summary did; ``published`` False: ``message`` says why, and
    ``local_dir`` holds the summary."""

    published: bool
    message: str
    local_dir: Path
    urls: dict[str, str] = field(default_factory=dict)

    @property
    def summary_url(self) -> str | None:
        return self.urls.get("summary.html")


def publish_suite_summary(
    summary: SuiteSummary,
    store: ObjectStore,
    local_dir: Path,
    *,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> SuitePublishOutcome:
    """Upload the summary (the copy in ``local_dir`` stays) and move the suite's
    ``latest.json`` to it. Never raises for the store: the outcome says what failed."""
    base, run_key = _keys(summary)
    retrier = Retrier(retry or RetryPolicy(), sleep)
    urls: dict[str, str] = {}
    try:
        for name, text in _files(summary).items():
            key = f"{run_key}/{name}"
            body = text.encode("utf-8")
            content_type = CONTENT_TYPES[Path(name).suffix]
            retrier(partial(store.put, key, body, content_type, None))
            urls[name] = store.url(key)
        pointer = SuiteLatest(
            suite=summary.suite,
            folder=suite_folder(summary),
            flow_run_id=summary.flow_run_id,
            started_at=summary.started_at,
            verdict=summary.verdict,
            summary=f"{suite_folder(summary)}/summary.html",
            summary_url=urls["summary.html"],
        )
        latest_key = f"{base}/latest.json"
        latest_body = pointer.model_dump_json(indent=2).encode("utf-8")
        retrier(lambda: store.put(latest_key, latest_body, CONTENT_TYPES[".json"], NO_CACHE))
        urls["latest.json"] = store.url(latest_key)
    except StoreError as exc:
        why = "the store kept failing" if exc.transient else "the store refused"
        return SuitePublishOutcome(
            False,
            f"suite summary not published to {store.describe()}: {why} ({exc}; "
            f"{retrier.attempts} attempt(s)). It is kept at {local_dir}.",
            local_dir,
        )
    return SuitePublishOutcome(
        True,
        f"suite summary published to {store.describe()}: {urls['summary.html']}",
        local_dir,
        urls,
    )
