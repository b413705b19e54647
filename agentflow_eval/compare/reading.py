"""A run's summaries from its ``results.json``, without reading its trials.

A comparison needs each case's counts and criterion means (``cases``), never the trials,
which are nearly all of the file (tens of MB at 10,000 trials). The writer
(:mod:`agentflow_eval.files.results_json`) lays the document out as
``model_dump_json(indent=2)`` does: every top-level key starts a line indented by
exactly two spaces, and JSON strings escape their newlines, so the bytes
``\\n  "trials": `` occur once, where the trials begin, after ``cases`` and every other
summary field. Reading stops there: the head, closed with ``}``, is a complete document
of the run without ``trials`` (and without ``notes``, which follow them). From a stream
(an S3 object) the rest is never downloaded.

A file laid out otherwise (compact JSON, hand-edited, another writer) has no such line, or
has ``trials`` before ``cases``; it is read whole, the usual way: slower, never wrong.
Either way the file is held to every file's limits (:mod:`agentflow_eval.files.limits`):
no more than a results.json may be, nesting and numbers within bounds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentflow_eval.files.limits import MAX_RESULTS_BYTES, UnreadableFile, parse_json, size_text
from agentflow_eval.files.results_json import ResultsFileError, run_result_from_json
from agentflow_eval.models.results import RunResult
from agentflow_eval.storage.base import ReadableStream

__all__ = ["read_run_summary", "run_summary_from_stream"]

_TRIALS_KEY = b'\n  "trials": '
_CHUNK = 1 << 20


def _parse(document: bytes, source: str) -> Any:
    try:
        return parse_json(document, source)
    except UnreadableFile as exc:
        raise ResultsFileError(str(exc)) from None


def _read(stream: ReadableStream, head: bytearray, source: str) -> bytes:
    """``head`` and one more chunk of ``stream`` (empty at its end), refused past the
    most a results.json may be."""
    chunk = stream.read(_CHUNK)
    if len(head) + len(chunk) > MAX_RESULTS_BYTES:
        raise ResultsFileError(
            f"{source}: more than the {size_text(MAX_RESULTS_BYTES)} a results.json may be"
        )
    return chunk


def _summary(raw: Any, source: str) -> RunResult:
    if isinstance(raw, dict):
        # the same summary however the file was read: the trials are never validated
        # into models (not needed, and large), the notes (after them) never read
        raw.pop("trials", None)
        raw.pop("notes", None)
    return run_result_from_json(raw, source)


def run_summary_from_stream(stream: ReadableStream, source: str) -> RunResult:
    """The run in the results.json ``stream`` holds, with ``trials`` and ``notes`` left
    empty; reads no further than the trials. ``source`` names the file in errors
    (:class:`~agentflow_eval.files.results_json.ResultsFileError`)."""
    head = bytearray()
    while True:
        chunk = _read(stream, head, source)
        if not chunk:
            return _summary(_parse(bytes(head), source), source)
        searched_from = max(0, len(head) - len(_TRIALS_KEY) + 1)
        head += chunk
        at = head.find(_TRIALS_KEY, searched_from)
        if at < 0:
            continue
        summary = bytes(head[:at]).rstrip()
        try:
            raw = _parse(summary.removesuffix(b",") + b"\n}", source)
        except ResultsFileError:
            break  # not the layout expected: read it whole
        if isinstance(raw, dict) and "cases" in raw:
            return _summary(raw, source)
        break
    while chunk:
        chunk = _read(stream, head, source)
        head += chunk
    return _summary(_parse(bytes(head), source), source)


def read_run_summary(path: Path) -> RunResult:
    """The run in the results.json at ``path`` without its trials (see the module)."""
    try:
        with path.open("rb") as handle:
            return run_summary_from_stream(handle, str(path))
    except IsADirectoryError:
        raise ResultsFileError(f"{path}: is a folder, not a results.json") from None
    except FileNotFoundError:
        raise ResultsFileError(f"{path}: no such file") from None
