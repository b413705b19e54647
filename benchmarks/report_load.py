"""How a large HTML report opens in a browser: ``python benchmarks/report_load.py
[--repeat N] [REPORT.html ...]``.

Without paths, builds the 10,000-trial sample report (2,000 cases × 5 trials, three
criteria, tool calls, multi-line answers; written from ``judged.jsonl`` by the report
stage, as a run writes it) in a temporary folder. Each page is loaded ``--repeat`` times,
each time in a fresh headless Chromium driven over the DevTools protocol, and measured:
file size, nodes in the document once its script ran, time from navigation to the end of
the load event and the CPU time the page's main thread spent until then (min and median:
on a shared machine the first includes waiting for a core, the second does not), the
renderer's resident memory (and how much above a blank page's that is), and the
JavaScript heap.

The figures are printed as a markdown table; ``benchmarks/RESULTS.md`` keeps them in its
analysis section.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for folder in (ROOT, ROOT / "tests"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from support.chromium import CANDIDATES, FLAGS  # noqa: E402
from support.devtools import LoadFigures, devtools_session  # noqa: E402


@dataclass
class PageFigures:
    """One page measured ``len(loads)`` times."""

    path: Path
    loads: list[LoadFigures]
    blank_rss_mib: float | None

    def row(self) -> str:
        load = [f.load_event_ms for f in self.loads]
        cpu = [f.main_thread_cpu_ms for f in self.loads]
        last = self.loads[-1]
        rss = statistics.median(f.renderer_rss_mib or 0.0 for f in self.loads)
        above = f" ({rss - self.blank_rss_mib:+.0f})" if self.blank_rss_mib is not None else ""
        return (
            f"| {self.path.name} | {self.path.stat().st_size / 1e6:.1f} MB | {last.nodes:,} | "
            f"{min(load):,.0f} / {statistics.median(load):,.0f} ms | "
            f"{min(cpu):,.0f} / {statistics.median(cpu):,.0f} ms | "
            f"{rss:,.0f} MiB{above} | {last.js_heap_used_mib:.1f} MiB |"
        )


def browser_binary() -> str:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit(f"headless Chromium not found (looked for {', '.join(CANDIDATES)})")


def measure(binary: str, page: Path) -> LoadFigures:
    """``page`` loaded once in a fresh browser."""
    with (
        tempfile.TemporaryDirectory(prefix="report-load-") as profile,
        devtools_session(binary, Path(profile), FLAGS) as browser,
    ):
        return browser.open_tab().load(page)


def sample_report(folder: Path) -> Path:
    """The 10,000-trial sample report, written by the report stage."""
    from support.sample_results import sample_run, write_run_dir_streamed

    run, eval_set = sample_run(cases=2000, trials=5, multiline=True)
    return write_run_dir_streamed(folder / "run", run, eval_set) / "report.html"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="*", type=Path, help="report pages to measure")
    parser.add_argument("--repeat", type=int, default=5, help="loads per page (default 5)")
    args = parser.parse_args(argv)
    binary = browser_binary()
    with tempfile.TemporaryDirectory(prefix="report-load-pages-") as scratch:
        folder = Path(scratch)
        pages = list(args.reports) or [sample_report(folder)]
        blank = folder / "blank.html"
        blank.write_text("<!DOCTYPE html><title>blank</title>", encoding="utf-8")
        blank_rss = measure(binary, blank).renderer_rss_mib
        print(
            "| page | size | nodes | load event (min / median) | main-thread CPU to load "
            "(min / median) | renderer RSS (above a blank page) | JS heap |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        for page in pages:
            loads = [measure(binary, page) for _ in range(args.repeat)]
            print(PageFigures(page, loads, blank_rss).row(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
