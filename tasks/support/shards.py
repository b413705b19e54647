"""Sharded runs: a big eval set split over the pool's workers, merged back into one run.

The parent run plans the whole run, then starts one ``evaluate`` flow run per shard of the
same deployment (``run_deployment``), each with ``shard={index, count, parent_run_id}``.
A shard evaluates its cases (every ``count``-th case, from ``index``), then leaves its
``trials.jsonl`` and ``judged.jsonl`` in the shared storage under
``agentflow-shards/<parent run id>/shard-<index>/``. The parent copies each finished
shard's files into its run folder (``shards/shard-<index>/``) as soon as that shard
completes, so a parent resumed after a failed shard starts only the shards it lacks.
Merging concatenates the shards' lines (their cases are disjoint) into the run folder's
own files, which the report stage then reads as for any run.

A paired shard runs both agents, in pairs, on its cases (its waves too, when adaptive),
and hands back both sides and its waves: ``against/trials.jsonl``,
``against/judged.jsonl`` and ``waves.jsonl`` beside its own files. The parent merges the
baseline side into its ``against/`` folder and the waves into its ``waves.jsonl`` (each
wave marked with the shard that ran it), then compares pair by pair as an unsharded
paired run does.
"""

from __future__ import annotations

import json
from pathlib import Path

from prefect.filesystems import WritableFileSystem

from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.pipeline.pairs import WAVES_FILE, read_waves
from agentflow_eval.run.plan import AGAINST_FOLDER, RunPaths
from agentflow_eval.run.resumable import TrialKey

__all__ = [
    "HANDOFF_PREFIX",
    "PAIRED_SHARD_FILES",
    "SHARD_FILES",
    "download_shard",
    "finished_shards",
    "merge_shards",
    "shard_dir",
    "shard_files",
    "upload_shard",
]

HANDOFF_PREFIX = "agentflow-shards"
SHARD_FILES = ("trials.jsonl", "judged.jsonl")
PAIRED_SHARD_FILES = (
    *SHARD_FILES,
    *(f"{AGAINST_FOLDER}/{name}" for name in SHARD_FILES),
    WAVES_FILE,
)
"""What a paired shard hands back: both sides' trials and verdicts, and its waves."""


def shard_files(paired: bool) -> tuple[str, ...]:
    """The files, relative to a run folder, a shard hands back."""
    return PAIRED_SHARD_FILES if paired else SHARD_FILES


async def _read(storage: WritableFileSystem, key: str) -> bytes:
    # the async variant where the block has one (Prefect 3 blocks dispatch on context)
    reader = getattr(storage, "aread_path", None)
    return bytes(await (reader(key) if reader else storage.read_path(key)))


async def _write(storage: WritableFileSystem, key: str, body: bytes) -> None:
    writer = getattr(storage, "awrite_path", None)
    await (writer(key, body) if writer else storage.write_path(key, body))


def _handoff_key(parent_run_id: str, index: int, name: str) -> str:
    return f"{HANDOFF_PREFIX}/{parent_run_id}/shard-{index}/{name}"


async def upload_shard(
    storage: WritableFileSystem, parent_run_id: str, index: int, paths: RunPaths, paired: bool
) -> None:
    """Leave a finished shard's trials and verdicts (a paired shard's: both sides', and
    its waves) in the shared storage; a file the shard has not made (no waves) goes as
    an empty one, so that the parent can tell a shard that finished."""
    for name in shard_files(paired):
        path = paths.run_dir / name
        body = path.read_bytes() if path.exists() else b""
        await _write(storage, _handoff_key(parent_run_id, index, name), body)


def shard_dir(paths: RunPaths, index: int) -> Path:
    return paths.run_dir / "shards" / f"shard-{index}"


async def download_shard(
    storage: WritableFileSystem, parent_run_id: str, index: int, paths: RunPaths, paired: bool
) -> Path:
    """Copy a finished shard's files from the shared storage into the parent's run
    folder (each written whole: a shard counts as finished once all are in)."""
    folder = shard_dir(paths, index)
    for name in shard_files(paired):
        body = await _read(storage, _handoff_key(parent_run_id, index, name))
        write_text_atomically(folder / name, [body.decode("utf-8")])
    return folder


def finished_shards(paths: RunPaths, count: int, paired: bool = False) -> set[int]:
    """The shards whose files the parent's run folder already holds."""
    return {
        index
        for index in range(count)
        if all((shard_dir(paths, index) / name).is_file() for name in shard_files(paired))
    }


def merge_shards(paths: RunPaths, count: int, paired: bool = False) -> dict[str, int]:
    """Write the run folder's trials.jsonl and judged.jsonl (a paired run's: its
    ``against/`` folder's too, and waves.jsonl) from its ``count`` shards; return the
    lines each file got."""
    missing = sorted(set(range(count)) - finished_shards(paths, count, paired))
    if missing:
        raise FileNotFoundError(f"{paths.run_dir}: shards {missing} have no results to merge")
    lines: dict[str, int] = {}
    for name in shard_files(paired):
        if name == WAVES_FILE:
            pieces = _merged_waves([read_waves(shard_dir(paths, i)) for i in range(count)])
        else:
            pieces = [_text_of(shard_dir(paths, index) / name) for index in range(count)]
        write_text_atomically(paths.run_dir / name, pieces)
        lines[name] = sum(piece.count("\n") for piece in pieces)
    return lines


def _text_of(path: Path) -> str:
    """A shard's file, ending in a newline unless empty (so that files join by line)."""
    text = path.read_text(encoding="utf-8")
    return text + "\n" if text and not text.endswith("\n") else text


def _merged_waves(shards: list[list[list[TrialKey]]]) -> list[str]:
    """The shards' waves as one waves.jsonl: shard by shard, numbered anew, each with the
    shard that ran it. A shard's waves went to its own cases only, so together they are
    the waves of one run; the shard's own folder keeps its numbering, for its resume."""
    merged: list[str] = []
    for index, waves in enumerate(shards):
        for wave in waves:
            pairs = [list(key) for key in wave]
            merged.append(
                json.dumps({"wave": len(merged) + 1, "shard": index, "pairs": pairs}) + "\n"
            )
    return merged
