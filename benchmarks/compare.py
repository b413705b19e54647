"""Comparing two 10,000-trial runs: ``python benchmarks/compare.py [--repeat N]``.

Builds, for three shapes (2,000 cases × 5 trials and 100 cases × 100 trials: 10,000 trials
each; 100 cases × 300 trials: 30,000, to show what grows with the trials), a baseline and
a candidate ``results.json`` (trials copied from a real judged sample run, so the files
have a real run's size; in the candidate every 20th case drops by 60 points), then
measures in fresh processes: ``agentflow-eval compare BASELINE CANDIDATE --json`` (wall
time, CPU time and peak RSS); for contrast, one file read whole with
``read_results_json``; and where a comparison's CPU time goes (imports, scipy.stats,
reading, statistics, JSON). Prints Markdown tables; the figures go to the analysis part
of ``benchmarks/RESULTS.md`` by hand. CPU times are steadier than wall times on a
shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from support.sample_results import sample_run  # noqa: E402

from agentflow_eval.files.results_json import write_results_json  # noqa: E402
from agentflow_eval.models.results import CaseResult, RunResult, TrialResult  # noqa: E402
from benchmarks.measure import Measured, run_measured_cpu  # noqa: E402

SHAPES = ((2000, 5), (100, 100), (100, 300))


def _templates() -> tuple[RunResult, TrialResult, TrialResult]:
    run, _ = sample_run()
    passed = next(trial for trial in run.trials if trial.status == "passed")
    failed = next(trial for trial in run.trials if trial.status == "failed")
    return run, passed, failed


def _trial_lines(
    cases: list[CaseResult], passed: TrialResult, failed: TrialResult
) -> Iterator[bytes]:
    """Each case's trials as judged.jsonl lines: its first ``passed`` trials pass."""
    shapes = {True: passed.model_dump(mode="json"), False: failed.model_dump(mode="json")}
    for case in cases:
        for index in range(case.runs):
            record = shapes[index < case.passed]
            record["trial"]["case_id"] = case.case_id
            record["trial"]["trial_index"] = index
            yield json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()


def _run(
    template: RunResult, run_id: str, rates: list[float], runs: int, rng: random.Random
) -> RunResult:
    case_template = template.cases[0]
    cases = []
    for index, rate in enumerate(rates):
        passed = sum(rng.random() < rate for _ in range(runs))
        cases.append(
            case_template.model_copy(
                update={
                    "case_id": f"case_{index:04d}",
                    "runs": runs,
                    "passed": passed,
                    "failed": runs - passed,
                    "errored": 0,
                    "not_evaluated": 0,
                    "pass_rate": passed / runs,
                    "ci_low": 0.0,  # not read by a comparison
                    "ci_high": 1.0,
                    "pass_at_k": {},
                    "pass_hat_k": {},
                }
            )
        )
    return template.model_copy(
        update={"run_id": run_id, "runs_per_case": runs, "cases": cases, "trials": []},
        deep=True,
    )


def build(directory: Path, cases: int, runs: int) -> tuple[Path, Path]:
    """A baseline and a candidate results.json of ``cases`` × ``runs`` trials each; in
    the candidate every 20th case falls by 60 points."""
    template, passed, failed = _templates()
    rng = random.Random(cases * 1000 + runs)
    rates = [rng.choice([1.0, 1.0, 0.95, 0.9, 0.8, 0.6]) for _ in range(cases)]
    dropped = [max(0.0, r - 0.6) if i % 20 == 0 else r for i, r in enumerate(rates)]
    paths = []
    for name, case_rates in (("baseline", rates), ("candidate", dropped)):
        run = _run(template, name, case_rates, runs, rng)
        path = directory / name / "results.json"
        write_results_json(run, path, trial_lines=_trial_lines(run.cases, passed, failed))
        paths.append(path)
    return paths[0], paths[1]


def _measure(command: Sequence[str]) -> Measured:
    env = dict(os.environ, NO_COLOR="1")
    return run_measured_cpu(command, env=env, cwd=ROOT, timeout_s=600)


# Where a comparison's time goes, in one process: CPU seconds per phase.
PHASES = """
import json, sys, time
marks = [time.process_time()]
import agentflow_eval.compare as compare
marks.append(time.process_time())
import scipy.stats
marks.append(time.process_time())
baseline, candidate = compare.load_side(sys.argv[1]), compare.load_side(sys.argv[2])
marks.append(time.process_time())
comparison = compare.compare_runs(baseline.run, candidate.run)
marks.append(time.process_time())
comparison.model_dump_json(indent=2)
marks.append(time.process_time())
names = ["imports", "scipy.stats", "reading both", "statistics", "JSON"]
print(json.dumps(dict(zip(names, [b - a for a, b in zip(marks, marks[1:])]))))
"""


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    args = parser.parse_args(argv)
    executable = Path(sys.executable).with_name("agentflow-eval")
    read_whole_code = (
        "import sys; from pathlib import Path; "
        "from agentflow_eval.files.results_json import read_results_json; "
        "read_results_json(Path(sys.argv[1]))"
    )
    rows, phase_rows = [], []
    with tempfile.TemporaryDirectory(prefix="agentflow-compare-bench-") as tmp:
        for cases, runs in SHAPES:
            baseline, candidate = build(Path(tmp) / f"{cases}x{runs}", cases, runs)
            shape = f"{cases:,} cases × {runs} trials ({cases * runs:,})"
            command = [str(executable), "compare", str(baseline), str(candidate), "--json"]
            compared = [_measure(command) for _ in range(args.repeat)]
            read_whole = [
                _measure([sys.executable, "-c", read_whole_code, str(baseline)])
                for _ in range(args.repeat)
            ]
            phases = [
                json.loads(
                    _measure(
                        [sys.executable, "-c", PHASES, str(baseline), str(candidate)]
                    ).run.stdout
                )
                for _ in range(args.repeat)
            ]
            document = json.loads(compared[-1].run.stdout)
            regressed = sum(case["verdict"] == "regression" for case in document["cases"])
            size_mib = baseline.stat().st_size / 2**20
            rows.append(
                f"| {shape} | {size_mib:.0f} MiB "
                f"| {_median([m.run.wall_s for m in compared]):.2f} s "
                f"| {_median([m.cpu_s for m in compared]):.2f} s "
                f"| {max(m.run.peak_rss_mib for m in compared):.0f} MiB "
                f"| {_median([m.cpu_s for m in read_whole]):.2f} s, "
                f"{max(m.run.peak_rss_mib for m in read_whole):.0f} MiB "
                f"| {regressed} of {cases // 20} | {document['overall']['verdict']} |"
            )
            names = list(phases[0])
            phase_rows.append(
                f"| {shape} | "
                + " | ".join(f"{_median([p[name] for p in phases]):.2f} s" for name in names)
                + " |"
            )
    print(
        "| runs compared (each side) | results.json | `compare --json` wall | CPU | peak RSS "
        "| one file read whole (`read_results_json`): CPU, peak RSS "
        "| regressed cases found (planted) | overall |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    print("\n".join(rows))
    print()
    print("CPU time by phase (one process; medians):")
    print()
    print("| runs compared | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    print("\n".join(phase_rows))
    print(f"\nmedians of {args.repeat}; load average {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
