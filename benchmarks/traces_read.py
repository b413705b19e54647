"""How fast production traces are read, and in how much memory: ``python
benchmarks/traces_read.py [--files 10000 100000] [--rate 1.0 0.01]``.

For each size, a folder of that many small trace objects in the OpenTelemetry Collector's
S3 exporter layout (one export request an object, one agent trace each: an
``invoke_agent`` root, two ``chat`` spans and a tool call; ~3 KB) is written once, then
read by a batch's intake (:func:`agentflow_eval.traces.intake.read_new_traces`: listing,
the cursor's markers created, each object read, its trace turned into a trial, sampled and
written to its version's recording) in a fresh process, and read a second time (nothing
new: listing the source and the markers only). Each child process reports traces read per
second and its peak resident memory (``ru_maxrss``); the scoring of the sampled traces
(the judge) is not measured here: it is any run's.

The figures are printed as a markdown table; ``benchmarks/RESULTS.md`` keeps them.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for folder in (ROOT, ROOT / "tests"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from support.otlp_traces import AgentTrace, export_request, s3_exporter_key  # noqa: E402

from agentflow_eval.models import defaults  # noqa: E402
from agentflow_eval.storage.local import LocalStore  # noqa: E402
from agentflow_eval.traces.batch import BatchFolder, new_batch_id  # noqa: E402
from agentflow_eval.traces.bounds import Limits  # noqa: E402
from agentflow_eval.traces.cursor import Cursor  # noqa: E402
from agentflow_eval.traces.intake import IntakeOptions, read_new_traces  # noqa: E402


def write_source(root: Path, files: int) -> None:
    """``files`` objects of one trace each, ten versions, spread over minute partitions."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for n in range(files):
        trace = AgentTrace(
            f"bench-{n}", version=f"1.{n % 10}", start_ns=1_767_225_600_000_000_000 + n * 10**9
        )
        key = s3_exporter_key(start + timedelta(seconds=n), f"{n:07d}")
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(export_request([trace])))


def read_once(source: Path, out: Path, rate: float) -> dict[str, float]:
    """One batch's intake of ``source`` (in this process): its figures."""
    options = IntakeOptions(
        source=str(source),
        eval_set_id="bench",
        version_attribute="service.version",
        case_attribute=None,
        strata=(),
        sample_rate=rate,
        include=("*.json",),
        max_objects=None,
        limits=Limits(defaults.TRACE_MAX_CHARS, defaults.TRACE_MAX_DEPTH),
        max_line_bytes=int(defaults.TRACE_MAX_MB * 2**20),
    )
    batch = BatchFolder(out / "traces" / new_batch_id())
    batch.create({})
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    summary = read_new_traces(LocalStore(source), Cursor(LocalStore(out), "cursor"), batch, options)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "objects": summary.counts.objects_read,
        "traces": summary.counts.traces,
        "scored": summary.counts.scored,
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "peak_rss_mib": after.ru_maxrss / 1024,
    }


def child(argv: list[str]) -> None:
    source, out, rate = Path(argv[0]), Path(argv[1]), float(argv[2])
    print(json.dumps(read_once(source, out, rate)))


def measure(source: Path, out: Path, rate: float) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(source), str(out), str(rate)],
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rate", type=float, nargs="+", default=[1.0, 0.01])
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    baseline = subprocess.run(
        [sys.executable, "-c", "import resource, agentflow_eval.traces.intake; "
         "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    print(f"a process that imported the reader: {float(baseline.stdout):.0f} MiB peak RSS\n")
    print(
        "| files | sample rate | first read (wall / CPU) | traces/s (wall / CPU) | peak RSS "
        "| second read (wall / CPU) | peak RSS |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for files in args.files:
        work = Path(tempfile.mkdtemp(prefix=f"traces-bench-{files}-"))
        try:
            source = work / "source"
            write_source(source, files)
            for rate in args.rate:
                out = work / f"out-{rate}"
                first = measure(source, out, rate)
                second = measure(source, out, rate)
                assert first["objects"] == files and second["objects"] == 0
                print(
                    f"| {files:,} | {rate:g} | {first['seconds']:.1f} s / "
                    f"{first['cpu_seconds']:.1f} s | {first['traces'] / first['seconds']:,.0f} / "
                    f"{first['traces'] / first['cpu_seconds']:,.0f} | "
                    f"{first['peak_rss_mib']:.0f} MiB | {second['seconds']:.1f} s / "
                    f"{second['cpu_seconds']:.1f} s | {second['peak_rss_mib']:.0f} MiB |",
                    flush=True,
                )
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
