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
"""

from __future__ import annotations

from pathlib import Path

from prefect.filesystems import WritableFileSystem

from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.run.plan import RunPaths

__all__ = [
    "HANDOFF_PREFIX",
    "SHARD_FILES",
    "download_shard",
    "finished_shards",
    "merge_shards",
    "shard_dir",
    "upload_shard",
]

HANDOFF_PREFIX = "agentflow-shards"
SHARD_FILES = ("trials.jsonl", "judged.jsonl")


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
    storage: WritableFileSystem, parent_run_id: str, index: int, paths: RunPaths
) -> None:
    """Leave a finished shard's trials and verdicts in the shared storage."""
    for name in SHARD_FILES:
        path = paths.run_dir / name
        body = path.read_bytes() if path.exists() else b""
        await _write(storage, _handoff_key(parent_run_id, index, name), body)


def shard_dir(paths: RunPaths, index: int) -> Path:
    return paths.run_dir / "shards" / f"shard-{index}"


async def download_shard(
    storage: WritableFileSystem, parent_run_id: str, index: int, paths: RunPaths
) -> Path:
    """Copy a finished shard's files from the shared storage into the parent's run
    folder (each written whole: a shard counts as finished once all are in)."""
    folder = shard_dir(paths, index)
    for name in SHARD_FILES:
        body = await _read(storage, _handoff_key(parent_run_id, index, name))
        write_text_atomically(folder / name, [body.decode("utf-8")])
    return folder


def finished_shards(paths: RunPaths, count: int) -> set[int]:
    """The shards whose files the parent's run folder already holds."""
    return {
        index
        for index in range(count)
        if all((shard_dir(paths, index) / name).is_file() for name in SHARD_FILES)
    }


def merge_shards(paths: RunPaths, count: int) -> dict[str, int]:
    """Write the run folder's trials.jsonl and judged.jsonl from its ``count`` shards;
    return the lines each file got."""
    missing = sorted(set(range(count)) - finished_shards(paths, count))
    if missing:
        raise FileNotFoundError(f"{paths.run_dir}: shards {missing} have no results to merge")
    lines: dict[str, int] = {}
    for name in SHARD_FILES:
        pieces = []
        for index in range(count):
            text = (shard_dir(paths, index) / name).read_text(encoding="utf-8")
            if text and not text.endswith("\n"):
                text += "\n"
            pieces.append(text)
        write_text_atomically(paths.run_dir / name, pieces)
        lines[name] = sum(piece.count("\n") for piece in pieces)
    return lines
