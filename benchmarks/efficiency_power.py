"""How often efficiency comparisons cry wolf, and how small a slowdown they find:
``python benchmarks/efficiency_power.py [--repetitions 200] [--cases 10]``.

Simulated runs (``tests/support/efficiency_sim.py``: latency log-normal with median
2,000 ms and σ 0.5 of its log; input tokens log-normal median 1,500, σ 0.3; output
tokens median 300, σ 0.4; tool calls 1 + Poisson(1.5); cost from the tokens), compared
with :func:`~agentflow_eval.compare.efficiency.compare_efficiency` at α = 0.05, at 5 and
at 20 runs per case:

- **A/A**: both sides drawn from the same distribution. Per measure: the share of cases
  called changed (per-case false-positive rate), the share of comparisons with at least
  one such case (the family-wise rate Holm's correction bounds at α), and the share whose
  overall verdict was a change.
- **Power**: one case's latency multiplied by a factor, the others unchanged; the share of
  comparisons in which that case is called ``slower``, and the smallest factor found
  at least 80% of the time. Then every case's latency multiplied: the share of
  comparisons whose overall latency is called ``slower``.

Prints Markdown; the figures go to ``benchmarks/RESULTS.md`` by hand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import numpy as np  # noqa: E402
from support.efficiency_sim import simulated_figures  # noqa: E402

from agentflow_eval.compare.efficiency import CaseFigures, compare_efficiency  # noqa: E402
from agentflow_eval.models.tolerances import MEASURES, EfficiencyTolerances  # noqa: E402

ALPHA = 0.05
RUNS = (5, 20)
FACTORS = (1.25, 1.5, 2.0, 3.0)
OVERALL_FACTORS = (1.1, 1.25, 1.5)
TARGET_POWER = 0.8


def _comparison(
    rng: np.random.Generator,
    cases: int,
    runs: int,
    slow_factor: float = 1.0,
    slow_cases: int = 1,
) -> dict[str, dict[str, str]]:
    """One comparison: each case's verdict per measure, and the overall ones (``*``)."""
    result = compare_efficiency(
        [
            CaseFigures(
                f"c{i}",
                simulated_figures(rng, runs),
                simulated_figures(rng, runs, latency=slow_factor if i < slow_cases else 1.0),
            )
            for i in range(cases)
        ],
        ALPHA,
        EfficiencyTolerances(),
    )
    verdicts = {
        case_id: {change.measure: change.verdict for change in efficiency.measures}
        for case_id, efficiency in result.cases.items()
    }
    verdicts["*"] = {change.measure: change.verdict for change in result.comparison.overall}
    return verdicts


def aa(rng: np.random.Generator, cases: int, runs: int, repetitions: int) -> list[str]:
    flagged = dict.fromkeys(MEASURES, 0)
    any_flagged = dict.fromkeys(MEASURES, 0)
    overall = dict.fromkeys(MEASURES, 0)
    for _ in range(repetitions):
        verdicts = _comparison(rng, cases, runs)
        for measure in MEASURES:
            found = sum(
                v[measure] != "no significant change" for k, v in verdicts.items() if k != "*"
            )
            flagged[measure] += found
            any_flagged[measure] += found > 0
            overall[measure] += verdicts["*"][measure] != "no significant change"
    return [
        f"| {runs} | {measure} | {100 * flagged[measure] / (repetitions * cases):.2f}% | "
        f"{100 * any_flagged[measure] / repetitions:.1f}% | "
        f"{100 * overall[measure] / repetitions:.1f}% |"
        for measure in MEASURES
    ]


def power(rng: np.random.Generator, cases: int, runs: int, repetitions: int) -> str:
    found = []
    for factor in FACTORS:
        hits = sum(
            _comparison(rng, cases, runs, factor)["c0"]["latency"] == "slower"
            for _ in range(repetitions)
        )
        found.append(hits / repetitions)
    smallest = next(
        (
            f"×{factor:g}"
            for factor, share in zip(FACTORS, found, strict=True)
            if share >= TARGET_POWER
        ),
        f"above ×{FACTORS[-1]:g}",
    )
    cells = " | ".join(f"{100 * share:.0f}%" for share in found)
    return f"| {runs} | {cells} | {smallest} |"


def overall_power(rng: np.random.Generator, cases: int, runs: int, repetitions: int) -> str:
    found = [
        sum(
            _comparison(rng, cases, runs, factor, cases)["*"]["latency"] == "slower"
            for _ in range(repetitions)
        )
        / repetitions
        for factor in OVERALL_FACTORS
    ]
    return f"| {runs} | " + " | ".join(f"{100 * share:.0f}%" for share in found) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=200)
    parser.add_argument("--cases", type=int, default=10)
    parser.add_argument("--power-repetitions", type=int, default=200)
    parser.add_argument("--skip-aa", action="store_true", help="only the power tables")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    if not args.skip_aa:
        print(f"### A/A: {args.repetitions} comparisons of {args.cases} cases, alpha {ALPHA}\n")
        print("| runs per case | measure | cases called changed | comparisons with one | overall |")
        print("|---:|---|---:|---:|---:|")
        for runs in RUNS:
            for line in aa(rng, args.cases, runs, args.repetitions):
                print(line)
    reps = args.power_repetitions
    print(f"\n### Power: one case of {args.cases} slower by a factor ({reps} each)\n")
    print("| runs per case | " + " | ".join(f"×{f:g}" for f in FACTORS) + " | smallest ≥ 80% |")
    print("|---:|" + "---:|" * (len(FACTORS) + 1))
    for runs in RUNS:
        print(power(rng, args.cases, runs, reps))
    print(f"\n### Power overall: all {args.cases} cases slower by a factor ({reps} each)\n")
    print("| runs per case | " + " | ".join(f"×{f:g}" for f in OVERALL_FACTORS) + " |")
    print("|---:|" + "---:|" * len(OVERALL_FACTORS))
    for runs in RUNS:
        print(overall_power(rng, args.cases, runs, reps))


if __name__ == "__main__":
    main()
