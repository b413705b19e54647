"""Measuring a command: wall time and peak resident memory of a process and its children,
read from ``/proc`` (no extra dependencies), plus the trial timings a run left in its
``trials.jsonl``; and what the benchmark scripts share: their command-line options and
how they rewrite their block of ``benchmarks/RESULTS.md``."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

__all__ = [
    "Measured",
    "ProcessRun",
    "TrialTimes",
    "benchmark_parser",
    "replace_block",
    "run_measured",
    "run_measured_cpu",
    "trial_times",
]

_POLL_S = 0.02


@dataclass
class ProcessRun:
    """A finished command: exit code, output, wall time, and peak RSS in MiB of the
    process itself and of the largest of its descendants (Prefect's server, say)."""

    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    peak_rss_mib: float
    children_peak_rss_mib: dict[str, float] = field(default_factory=dict)

    def check(self) -> ProcessRun:
        if self.returncode != 0:
            raise RuntimeError(
                f"command failed with exit code {self.returncode}\n--- stdout\n"
                f"{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-3000:]}"
            )
        return self


def _status_kib(pid: int, key: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(key):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return None


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                found.extend(int(child) for child in handle.read().split())
        except FileNotFoundError:
            continue
    return found


def _command_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            parts = handle.read().split(b"\0")
    except FileNotFoundError:
        return str(pid)
    words = [p.decode(errors="replace") for p in parts if p]
    return " ".join(Path(w).name if i == 0 else w for i, w in enumerate(words[:4]))


def run_measured(
    command: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout_s: float = 1800
) -> ProcessRun:
    """Run ``command`` to completion, sampling the high-water RSS (``VmHWM``) of the
    process and of each descendant every 20 ms. The process's own peak is exact up to
    its last 20 ms (the high-water mark only grows)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        list(command),
        env=dict(env),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peaks: dict[int, int] = {}
    names: dict[int, str] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            pending = [process.pid]
            while pending:
                pid = pending.pop()
                hwm = _status_kib(pid, "VmHWM")
                if hwm is not None:
                    peaks[pid] = max(peaks.get(pid, 0), hwm)
                    if pid not in names:
                        names[pid] = _command_name(pid)
                pending.extend(_children(pid))
            done.wait(_POLL_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    finally:
        done.set()
        sampler.join()
    wall = time.perf_counter() - start
    own = peaks.pop(process.pid, 0)
    children: dict[str, float] = {}
    for pid, kib in peaks.items():
        name = names.get(pid, str(pid))
        children[name] = max(children.get(name, 0.0), kib / 1024)
    return ProcessRun(
        returncode=process.returncode,
        stdout=stdout,
        stderr=stderr,
        wall_s=wall,
        peak_rss_mib=own / 1024,
        children_peak_rss_mib=children,
    )


@dataclass(frozen=True)
class Measured:
    """A finished process and the CPU time (user + system) it and its children used:
    steadier than wall time on a machine shared with other work."""

    run: ProcessRun
    cpu_s: float


def run_measured_cpu(
    command: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout_s: float = 1800
) -> Measured:
    """:func:`run_measured`, checked, with the CPU time of the process and of every
    descendant it waited for (one command at a time: the counts are this process's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = run_measured(command, env=env, cwd=cwd, timeout_s=timeout_s).check()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(run, cpu)


@dataclass(frozen=True)
class TrialTimes:
    """When a run's trials happened, from ``trials.jsonl``: seconds since the first trial
    started at which each trial ended (sorted), and the trial phase's span."""

    ends_s: list[float]

    @property
    def count(self) -> int:
        return len(self.ends_s)

    @property
    def phase_s(self) -> float:
        """First trial start to last trial end."""
        return self.ends_s[-1] if self.ends_s else 0.0

    def per_block(self, block: int = 1000) -> list[float]:
        """Seconds each successive ``block`` of trials took to finish (the first block
        counts from the first trial's start)."""
        marks = [0.0] + [self.ends_s[i - 1] for i in range(block, self.count + 1, block)]
        return [later - earlier for earlier, later in itertools.pairwise(marks)]


def trial_times(run_dir: Path) -> TrialTimes:
    """Read the trial timings of the run in ``run_dir``."""
    starts: list[datetime] = []
    ends: list[datetime] = []
    with (run_dir / "trials.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            began = datetime.fromisoformat(record["started_at"])
            starts.append(began)
            ends.append(began + timedelta(milliseconds=record["duration_ms"]))
    if not starts:
        return TrialTimes([])
    origin = min(starts)
    return TrialTimes(sorted((end - origin).total_seconds() for end in ends))


def benchmark_parser(description: str, *, repeat: int) -> argparse.ArgumentParser:
    """A benchmark script's options: ``--repeat N`` (each measurement that many times,
    medians reported; default ``repeat``) and ``--no-write`` (print the figures, leave
    RESULTS.md as it is). A script adds its own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--repeat", type=int, default=repeat, help=f"runs per measurement (median; {repeat})"
    )
    parser.add_argument("--no-write", action="store_true", help="do not update RESULTS.md")
    return parser


def replace_block(path: Path, start: str, end: str, lines: Sequence[str]) -> None:
    """Replace the text between the markers ``start`` and ``end`` of ``path`` with
    ``lines`` (the block is appended, markers and all, when the markers are missing)."""
    block = "\n".join([start, *lines, end])
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1]
        path.write_text(head + block + tail, encoding="utf-8")
    else:
        path.write_text(f"{text.rstrip()}\n\n{block}\n", encoding="utf-8")
