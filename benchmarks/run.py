"""agentflow-eval's performance benchmark: ``python benchmarks/run.py [--quick]``.

Starts a local OpenAI-compatible server with a fixed 50 ms latency in its own process, then
measures, in one invocation:

- **W1** — 200 cases × 5 trials of the weather agent (two model calls per trial) through
  the real CLI (``agentflow-eval run ... --max-concurrency 32``, Prefect's start
  included), against the same calls made by a bare asyncio client at the same
  concurrency. Three ways: with Prefect's temporary API (the default), with an already
  running ``prefect server``, and with the agent's calls forced through LiteLLM.
- **W2** — W1 plus ``final_response_match_v2`` (3 samples), run twice on one Prefect home:
  the judge calls each run made, counted at the server (the second should make none).
- **W3** — 10,000 trials: time per 1,000 trials and peak memory.
- **L** — CPU per model call: bare aiohttp, the direct transport, ``litellm.acompletion``
  to the server, and ``litellm.acompletion`` with a mock response (no HTTP at all).

W1 is repeated (3 times, 1 with ``--quick``) and reported as medians; each repetition gets
a fresh Prefect home whose database one unmeasured one-trial run creates first (a user's
home keeps its database; creating it is a one-off). Eval sets are generated into a
temporary folder. The figures are printed and written to ``benchmarks/RESULTS.md``
(between its result markers)."""

from __future__ import annotations

import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bare_client import run_bare  # noqa: E402
from benchmarks.bench_model import CITIES, JUDGE_MODEL  # noqa: E402
from benchmarks.measure import (  # noqa: E402
    ProcessRun,
    benchmark_parser,
    replace_block,
    run_measured,
    trial_times,
)
from benchmarks.workloads import Workload, write_workload  # noqa: E402

LATENCY_S = 0.05
CONCURRENCY = 32
RESULTS_MD = ROOT / "benchmarks" / "RESULTS.md"
START_MARK = "<!-- results:start -->"
END_MARK = "<!-- results:end -->"
WEATHER_AGENT = "examples.weather.agent:agent"


@dataclass(frozen=True)
class Scale:
    """How big each workload is."""

    w1_cases: int
    w1_runs: int
    repeats: int
    w3_cases: int
    w3_runs: int

    @classmethod
    def full(cls) -> Scale:
        return cls(w1_cases=200, w1_runs=5, repeats=3, w3_cases=2000, w3_runs=5)

    @classmethod
    def quick(cls) -> Scale:
        return cls(w1_cases=200, w1_runs=5, repeats=1, w3_cases=400, w3_runs=5)


@dataclass
class CliRun:
    """One ``agentflow-eval run`` and what it left behind."""

    process: ProcessRun
    run_dir: Path
    trial_phase_s: float
    trials: int
    per_1000_s: list[float]
    results: dict[str, object]


@dataclass
class Report:
    """Everything measured, for printing and for RESULTS.md."""

    started: datetime
    machine: dict[str, str]
    scale: Scale
    w1: list[dict[str, float]] = field(default_factory=list)
    w2: dict[str, object] = field(default_factory=dict)
    w3: dict[str, object] = field(default_factory=dict)
    per_call: dict[str, float] = field(default_factory=dict)


# ---------------------------------------------------------------------------- setup


@contextmanager
def model_server(latency_s: float) -> Iterator[str]:
    """The scripted model server in its own process; yields its ``api_base``."""
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_server", "--latency", str(latency_s)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http"):
            raise RuntimeError(f"benchmark server did not start (first line: {url!r})")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def server_counts(api_base: str) -> dict[str, int]:
    """Requests per model the server has answered so far."""
    with urllib.request.urlopen(f"{api_base}/stats", timeout=10) as response:
        return dict(json.loads(response.read())["by_model"])


def cli_env(api_base: str, prefect_home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PREFECT_HOME=str(prefect_home),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        OPENAI_BASE_URL=api_base,
        OPENAI_API_KEY="bench",
        PYTHONPATH=str(ROOT),
    )
    env.pop("PREFECT_API_URL", None)  # Prefect's start is part of what we measure
    return env


def machine() -> dict[str, str]:
    """What the figures were measured on."""
    cpu = "unknown"
    with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
        for line in handle:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo", encoding="ascii") as handle:
        mem_kib = int(handle.readline().split()[1])
    versions = {}
    for name in ("litellm", "prefect", "aiohttp"):
        try:
            from importlib.metadata import version

            versions[name] = version(name)
        except Exception:
            versions[name] = "?"
    return {
        "cpu": f"{cpu} × {os.cpu_count()}",
        "memory": f"{mem_kib / 1024 / 1024:.1f} GiB",
        "os": platform.platform(),
        "python": platform.python_version(),
        "packages": ", ".join(f"{k} {v}" for k, v in versions.items()),
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


# ---------------------------------------------------------------------------- runs


def run_cli(
    agent: str, workload: Workload, env: dict[str, str], output: Path, *, extra: Sequence[str] = ()
) -> CliRun:
    """``agentflow-eval run`` in a subprocess, measured."""
    command = [
        str(Path(sys.executable).parent / "agentflow-eval"),
        "run",
        agent,
        str(workload.evalset),
        "--config",
        str(workload.config),
        "--max-concurrency",
        str(CONCURRENCY),
        "--output",
        str(output),
        *extra,
    ]
    process = run_measured(command, env=env, cwd=ROOT).check()
    found = re.search(r"^results in (\S+)", process.stdout, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no 'results in' line in the CLI output:\n{process.stdout[-2000:]}")
    run_dir = Path(found.group(1))
    times = trial_times(run_dir)
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    totals = results["totals"]
    if totals["trials"] != workload.trials or totals["errored"]:
        raise RuntimeError(
            f"{run_dir}: expected {workload.trials} trials and none errored, found "
            f"{totals['trials']} trials, {totals['errored']} errored"
        )
    return CliRun(
        process=process,
        run_dir=run_dir,
        trial_phase_s=times.phase_s,
        trials=times.count,
        per_1000_s=times.per_block(1000),
        results=results,
    )


def questions(workload: Workload) -> list[str]:
    """The user turns of every trial, as the bare client sends them."""
    return [
        f"What's the weather in {CITIES[i % len(CITIES)]}?"
        for i in range(workload.cases)
        for _ in range(workload.runs)
    ]


def warm_prefect_home(api_base: str, env: dict[str, str], folder: Path) -> None:
    """One unmeasured one-trial run: creates the Prefect home's database (a fresh home
    spends seconds on migrations, once; a user's home keeps its database)."""
    tiny = write_workload(folder, "warmup", cases=1, runs=1)
    run_cli(WEATHER_AGENT, tiny, env, folder / "warmup-out", extra=["--model", "openai/bench"])


@contextmanager
def running_prefect_server(home: Path) -> Iterator[str]:
    """``prefect server start`` (SQLite) in its own home; yields its API URL."""
    home.mkdir(parents=True, exist_ok=True)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_UI_ENABLED": "false",
    }
    log = (home / "server.log").open("wb")
    process = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "prefect"),
            "server",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"prefect server did not start; see {home}/server.log"
                    ) from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def measure_w1(report: Report, api_base: str, folder: Path, log: Callable[[str], None]) -> None:
    scale = report.scale
    workload = write_workload(folder, "w1", cases=scale.w1_cases, runs=scale.w1_runs)
    weather = ["--model", "openai/bench"]
    with running_prefect_server(folder / "prefect-server") as server_url:
        for repeat in range(scale.repeats):
            env = cli_env(api_base, folder / f"prefect-w1-{repeat}")
            warm_prefect_home(api_base, env, folder)
            bare = run_bare(api_base, questions(workload), CONCURRENCY)
            temporary = run_cli(WEATHER_AGENT, workload, env, folder / "out", extra=weather)
            served = run_cli(
                WEATHER_AGENT,
                workload,
                {**env, "PREFECT_API_URL": server_url},
                folder / "out",
                extra=weather,
            )
            via_litellm = run_cli(
                WEATHER_AGENT,
                workload,
                {**env, "AGENTFLOW_LLM_TRANSPORT": "litellm"},
                folder / "out",
                extra=weather,
            )
            row = {
                "bare_s": bare,
                "trial_phase_s": temporary.trial_phase_s,
                "cli_s": temporary.process.wall_s,
                "cli_rss_mib": temporary.process.peak_rss_mib,
                "prefect_server_rss_mib": max(
                    temporary.process.children_peak_rss_mib.values(), default=0.0
                ),
                "served_trial_phase_s": served.trial_phase_s,
                "served_cli_s": served.process.wall_s,
                "served_cli_rss_mib": served.process.peak_rss_mib,
                "litellm_trial_phase_s": via_litellm.trial_phase_s,
                "litellm_cli_s": via_litellm.process.wall_s,
                "litellm_cli_rss_mib": via_litellm.process.peak_rss_mib,
            }
            report.w1.append(row)
            log(
                f"W1 #{repeat + 1}: bare {bare:.2f} s | temporary API: CLI {row['cli_s']:.1f} s, "
                f"trials {row['trial_phase_s']:.2f} s, RSS {row['cli_rss_mib']:.0f} MiB | "
                f"running server: CLI {row['served_cli_s']:.1f} s, trials "
                f"{row['served_trial_phase_s']:.2f} s | LiteLLM transport: CLI "
                f"{row['litellm_cli_s']:.1f} s, trials {row['litellm_trial_phase_s']:.2f} s"
            )


def measure_w2(report: Report, api_base: str, folder: Path, log: Callable[[str], None]) -> None:
    from agentflow_eval.criteria.registry import known_criteria

    if "final_response_match_v2" not in known_criteria():
        report.w2 = {"skipped": "final_response_match_v2 is not registered yet"}
        log("W2 skipped: final_response_match_v2 is not registered (criteria/registry)")
        return
    scale = report.scale
    workload = write_workload(
        folder,
        "w2",
        cases=scale.w1_cases,
        runs=scale.w1_runs,
        judge_samples=3,
        concurrency=CONCURRENCY,
    )
    env = cli_env(api_base, folder / "prefect-w2")  # one Prefect home: one judge cache
    runs = []
    for attempt in (1, 2):
        before = server_counts(api_base).get(JUDGE_MODEL, 0)
        run = run_cli(
            WEATHER_AGENT, workload, env, folder / "out", extra=["--model", "openai/bench"]
        )
        calls = server_counts(api_base).get(JUDGE_MODEL, 0) - before
        totals = run.results["totals"]
        assert isinstance(totals, dict)
        runs.append(
            {
                "cli_s": run.process.wall_s,
                "trial_phase_s": run.trial_phase_s,
                "judge_calls": calls,
                "judge_cache_hits": totals.get("judge_cache_hits", 0),
                "not_evaluated": totals["not_evaluated"],
                "rss_mib": run.process.peak_rss_mib,
            }
        )
        log(
            f"W2 run {attempt}: CLI {run.process.wall_s:.1f} s, judge calls at the server "
            f"{calls}, cache hits {totals.get('judge_cache_hits', 0)}, not evaluated "
            f"{totals['not_evaluated']}"
        )
    # the scripted agent answers each city the same way, so the first run pays one judge
    # call per distinct (prompt, sample): the cache shares the rest even within the run
    report.w2 = {"runs": runs, "distinct_calls": len(CITIES) * 3}


def measure_w3(report: Report, api_base: str, folder: Path, log: Callable[[str], None]) -> None:
    scale = report.scale
    workload = write_workload(folder, "w3", cases=scale.w3_cases, runs=scale.w3_runs)
    env = cli_env(api_base, folder / "prefect-w3")
    warm_prefect_home(api_base, env, folder)
    run = run_cli(WEATHER_AGENT, workload, env, folder / "out", extra=["--model", "openai/bench"])
    report.w3 = {
        "trials": run.trials,
        "cli_s": run.process.wall_s,
        "trial_phase_s": run.trial_phase_s,
        "per_1000_s": run.per_1000_s,
        "rss_mib": run.process.peak_rss_mib,
        "prefect_server_rss_mib": max(run.process.children_peak_rss_mib.values(), default=0.0),
    }
    log(
        f"W3: {run.trials} trials, CLI {run.process.wall_s:.1f} s, per 1,000 trials "
        + ", ".join(f"{s:.2f}" for s in run.per_1000_s)
        + f" s; peak RSS {run.process.peak_rss_mib:.0f} MiB"
    )


def measure_per_call(report: Report, api_base: str, log: Callable[[str], None]) -> None:
    """CPU milliseconds per model call, each client in a fresh process."""
    for client in ("aiohttp", "direct", "litellm", "litellm-mock"):
        output = subprocess.run(
            [sys.executable, "-m", "benchmarks.call_cost", client, api_base],
            cwd=ROOT,
            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        report.per_call[client] = float(output.strip().splitlines()[-1])
        log(f"L: {client}: {report.per_call[client]:.2f} ms CPU per call")


# ---------------------------------------------------------------------------- output


def median(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def summary_lines(report: Report) -> list[str]:
    """The results as markdown."""
    m = report.machine
    lines = [
        f"Measured {report.started:%Y-%m-%d %H:%M} UTC on {m['cpu']}, {m['memory']} RAM, "
        f"{m['os']}, Python {m['python']} ({m['packages']}); load average at start "
        f"{m['load average at start']}. Model latency {LATENCY_S * 1000:.0f} ms, "
        f"concurrency {CONCURRENCY}.",
        "",
    ]
    if report.w1:
        rows = report.w1
        bare = median(rows, "bare_s")
        n = report.scale.w1_cases * report.scale.w1_runs

        def cells(prefix: str) -> tuple[str, str, str]:
            trial = median(rows, f"{prefix}trial_phase_s")
            cli = median(rows, f"{prefix}cli_s")
            return (
                f"{trial:.2f} s ({trial / bare:.2f}×)",
                f"{cli:.1f} s (bare + {cli - bare:.1f} s)",
                f"{median(rows, f'{prefix}cli_rss_mib'):.0f} MiB",
            )

        temporary, served, via_litellm = cells(""), cells("served_"), cells("litellm_")
        lines += [
            f"### W1 — {report.scale.w1_cases} cases × {report.scale.w1_runs} trials "
            f"({n} trials, {2 * n} model calls); medians of {len(rows)}",
            "",
            "The weather agent (`examples.weather.agent`, `--model openai/bench`) through the "
            "CLI and the evaluate flow. Columns: Prefect's temporary API started by the run "
            "(the default; its database already created); an already running `prefect "
            "server` (`PREFECT_API_URL`); the temporary API with the agent's calls forced "
            "through LiteLLM (`AGENTFLOW_LLM_TRANSPORT=litellm`).",
            "",
            "| | bare client | temporary API | running server | via LiteLLM |",
            "|---|---:|---:|---:|---:|",
            f"| trial phase | {bare:.2f} s | {temporary[0]} | {served[0]} | {via_litellm[0]} |",
            f"| whole CLI run | – | {temporary[1]} | {served[1]} | {via_litellm[1]} |",
            f"| peak RSS of the CLI process | – | {temporary[2]} | {served[2]} | "
            f"{via_litellm[2]} |",
            f"| peak RSS of Prefect's temporary server | – | "
            f"{median(rows, 'prefect_server_rss_mib'):.0f} MiB | | |",
            "",
            "Each repetition (bare; temporary API trials/CLI; running server trials/CLI; via "
            "LiteLLM trials/CLI): "
            + "; ".join(
                f"{r['bare_s']:.2f}; {r['trial_phase_s']:.2f}/{r['cli_s']:.1f}; "
                f"{r['served_trial_phase_s']:.2f}/{r['served_cli_s']:.1f}; "
                f"{r['litellm_trial_phase_s']:.2f}/{r['litellm_cli_s']:.1f} s"
                for r in rows
            )
            + ".",
            "",
        ]
    if report.w2:
        lines += ["### W2 — W1 + final_response_match_v2 (3 samples), run twice", ""]
        if "skipped" in report.w2:
            lines += [f"Skipped: {report.w2['skipped']}.", ""]
        else:
            runs = report.w2["runs"]
            assert isinstance(runs, list)
            lines += [
                f"{report.scale.w1_cases * report.scale.w1_runs * 3} judge samples per run; "
                f"{report.w2['distinct_calls']} distinct (prompt, sample) pairs, since the "
                "scripted agent answers each city alike.",
                "",
                "| run | judge calls at the server | cache hits | not evaluated | CLI |",
                "|---|---:|---:|---:|---:|",
            ]
            for index, run in enumerate(runs, start=1):
                lines.append(
                    f"| {index} | {run['judge_calls']} | {run['judge_cache_hits']} | "
                    f"{run['not_evaluated']} | {run['cli_s']:.1f} s |"
                )
            lines.append("")
    if report.w3:
        w3 = report.w3
        per = w3["per_1000_s"]
        assert isinstance(per, list)
        lines += [
            f"### W3 — {w3['trials']} trials (weather agent, temporary API)",
            "",
            "| | |",
            "|---|---:|",
            f"| whole CLI run | {w3['cli_s']:.1f} s |",
            f"| trial phase | {w3['trial_phase_s']:.1f} s |",
            "| s per 1,000 trials | " + ", ".join(f"{s:.2f}" for s in per) + " |",
            f"| peak RSS of the CLI process | {w3['rss_mib']:.0f} MiB |",
            f"| peak RSS of Prefect's server process | {w3['prefect_server_rss_mib']:.0f} MiB |",
            "",
        ]
    if report.per_call:
        pc = report.per_call
        lines += [
            "### L — CPU per model call (fresh process, 32 concurrent, after warm-up)",
            "",
            "| bare aiohttp | direct transport → server | litellm.acompletion → server | "
            "litellm.acompletion, mock response (no HTTP) |",
            "|---:|---:|---:|---:|",
            f"| {pc['aiohttp']:.2f} ms | {pc['direct']:.2f} ms | {pc['litellm']:.2f} ms | "
            f"{pc['litellm-mock']:.2f} ms |",
            "",
        ]
    return lines


def write_results_md(lines: list[str]) -> None:
    """Replace the text between RESULTS.md's markers (create the file if needed)."""
    replace_block(RESULTS_MD, START_MARK, END_MARK, lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = benchmark_parser(__doc__.splitlines()[0], repeat=Scale.full().repeats)
    parser.add_argument("--quick", action="store_true", help="one W1 repetition, a small W3")
    parser.add_argument(
        "--only", choices=["w1", "w2", "w3", "calls"], action="append", help="run only these"
    )
    args = parser.parse_args(argv)
    selected = set(args.only or ["w1", "w2", "w3", "calls"])
    scale = Scale.quick() if args.quick else replace(Scale.full(), repeats=args.repeat)
    report = Report(started=datetime.now(UTC), machine=machine(), scale=scale)

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)

    with (
        tempfile.TemporaryDirectory(prefix="agentflow-bench-") as tmp,
        model_server(LATENCY_S) as api_base,
    ):
        folder = Path(tmp)
        log(f"model server at {api_base}; workloads in {folder}")
        if "calls" in selected:
            measure_per_call(report, api_base, log)
        if "w1" in selected:
            measure_w1(report, api_base, folder, log)
        if "w2" in selected:
            measure_w2(report, api_base, folder, log)
        if "w3" in selected:
            measure_w3(report, api_base, folder, log)
    lines = summary_lines(report)
    print("\n".join(["", *lines]))
    if not args.no_write:
        write_results_md(lines)
        print(f"written to {RESULTS_MD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
